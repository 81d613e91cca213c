// Command go-nethttp is the Go net/http system under test: the endpoint contract of
// stacks/CONTRACT.md (/hello, /compute, /healthz, /stats) on the standard library only.
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"os"
	"runtime"
	"strconv"
)

// maxComputeN bounds /compute?n= (about 10 s of trial division), as in the demo target.
const maxComputeN = 10_000_000

func main() {
	port := os.Getenv("PORT")
	if port == "" {
		port = "8080"
	}
	milli, limited := sizeScheduler()
	stats := newStats()
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", counted(stats, pathHello, hello))
	mux.HandleFunc("/compute", counted(stats, pathCompute, compute))
	// Seed 4's string manipulation, counted with /compute (no database, CPU only).
	mux.HandleFunc("/strings", counted(stats, pathCompute, stringsHandler))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write([]byte("ok"))
	})
	mux.HandleFunc("/stats", func(w http.ResponseWriter, _ *http.Request) {
		doc := stats.snapshot()
		doc["runtime"] = runtimeInfo(milli, limited)
		writeJSON(w, http.StatusOK, doc)
	})
	mux.HandleFunc("/", counted(stats, pathOther, func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, "not found")
	}))
	addr := ":" + port
	log.Printf("go-nethttp listening on %s (GOMAXPROCS %d)", addr, runtime.GOMAXPROCS(0))
	log.Fatal(http.ListenAndServe(addr, mux))
}

// counted wraps a handler so the request is counted once its response is written.
func counted(s *stats, path int, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		h(w, r)
		s.record(path, r.Header.Get(cellHeader))
	}
}

func hello(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write([]byte(`{"message":"hello"}`))
}

func compute(w http.ResponseWriter, r *http.Request) {
	n := uint64(10_000)
	if raw, ok := r.URL.Query()["n"]; ok {
		v, err := strconv.ParseUint(raw[0], 10, 64)
		if err != nil || v > maxComputeN {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("n must be an integer in 0..=%d", maxComputeN))
			return
		}
		n = v
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = fmt.Fprintf(w, `{"n":%d,"primes":%d}`, n, countPrimesBelow(n))
}

// countPrimesBelow counts the primes below n by trial division, the loop of the comparisons.
func countPrimesBelow(n uint64) uint64 {
	var count uint64
	for i := uint64(2); i < n; i++ {
		prime := true
		for j := uint64(2); j*j <= i; j++ {
			if i%j == 0 {
				prime = false
				break
			}
		}
		if prime {
			count++
		}
	}
	return count
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

func writeError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"error": message})
}
