package main

import (
	"fmt"
	"sync"
	"testing"
)

func TestCountPrimesBelow(t *testing.T) {
	for n, want := range map[uint64]uint64{0: 0, 2: 0, 3: 1, 10: 4, 100: 25, 10_000: 1229} {
		if got := countPrimesBelow(n); got != want {
			t.Errorf("countPrimesBelow(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestStatsCountExactlyUnderConcurrency(t *testing.T) {
	s := newStats()
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 1000; i++ {
				s.record(pathHello, fmt.Sprintf("cell-%d", g%2))
			}
		}(g)
	}
	wg.Wait()
	snap := s.snapshot()
	if snap["requests"].(uint64) != 8000 {
		t.Fatalf("requests = %v", snap["requests"])
	}
	tags := snap["tags"].(map[string]uint64)
	if tags["cell-0"] != 4000 || tags["cell-1"] != 4000 {
		t.Fatalf("tags = %v", tags)
	}
}

func TestTagsOverflowPastTheCap(t *testing.T) {
	s := newStats()
	for i := 0; i < maxTags+10; i++ {
		s.record(pathOther, fmt.Sprintf("t%d", i))
	}
	s.record(pathOther, string(make([]byte, maxTagLen+1)))
	tags := s.snapshot()["tags"].(map[string]uint64)
	if len(tags) != maxTags+1 || tags[overflowTag] != 11 {
		t.Fatalf("%d tags, overflow %d", len(tags), tags[overflowTag])
	}
}
