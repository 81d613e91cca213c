package main

import (
	"sync"
	"sync/atomic"
)

// cellHeader is the request header the benchrun operator sets on every load request of a cell.
const cellHeader = "X-Benchrun-Cell"

const (
	maxTags     = 4096
	maxTagLen   = 253
	overflowTag = "_overflow"
)

const (
	pathHello = iota
	pathCompute
	pathItems
	pathDocs
	pathOther
)

// pathNames are the /stats keys, indexed by the path constants.
var pathNames = [...]string{"/hello", "/compute", "/items", "/docs", "other"}

// stats counts served requests per path and per X-Benchrun-Cell value, exactly.
type stats struct {
	total atomic.Uint64
	paths [len(pathNames)]atomic.Uint64
	tags  sync.Map // string -> *atomic.Uint64
	held  atomic.Int64
	mu    sync.Mutex // serialises inserting new tags
}

func newStats() *stats { return &stats{} }

// record counts one served request on path; tag is the cell header's value ("" for none).
func (s *stats) record(path int, tag string) {
	s.total.Add(1)
	s.paths[path].Add(1)
	if tag != "" {
		s.counter(tag).Add(1)
	}
}

func (s *stats) counter(tag string) *atomic.Uint64 {
	if len(tag) > maxTagLen {
		tag = overflowTag
	}
	if c, ok := s.tags.Load(tag); ok {
		return c.(*atomic.Uint64)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held.Load() >= maxTags {
		tag = overflowTag // the overflow counter does not count towards maxTags
	}
	c, loaded := s.tags.LoadOrStore(tag, new(atomic.Uint64))
	if !loaded && tag != overflowTag {
		s.held.Add(1)
	}
	return c.(*atomic.Uint64)
}

// snapshot is the /stats document.
func (s *stats) snapshot() map[string]any {
	paths := make(map[string]uint64, len(pathNames))
	for i, name := range pathNames {
		paths[name] = s.paths[i].Load()
	}
	tags := map[string]uint64{}
	s.tags.Range(func(k, v any) bool {
		tags[k.(string)] = v.(*atomic.Uint64).Load()
		return true
	})
	return map[string]any{"requests": s.total.Load(), "paths": paths, "tags": tags}
}
