package main

import (
	"os"
	"runtime"
	"strconv"
)

// cpuLimitEnv is the variable the benchrun operator sets to the container's CPU limit in
// millicores (the Downward API's limits.cpu with divisor 1m).
const cpuLimitEnv = "BENCHRUN_CPU_LIMIT_MILLICORES"

// procsForLimit is GOMAXPROCS for a CPU limit of milli millicores: one scheduler thread per
// CPU of the limit, a started CPU counting as a whole one, at least 1 (500m → 1, 1500m → 2,
// 3500m → 4) — the rule the Express workers and the JVM's processor count follow too.
func procsForLimit(milli int64) int {
	procs := (milli + 999) / 1000
	if procs < 1 {
		return 1
	}
	return int(procs)
}

// cpuLimitMillicores reads the CPU limit from getenv; ok is false when it is unset or not a
// positive integer.
func cpuLimitMillicores(getenv func(string) string) (milli int64, ok bool) {
	v, err := strconv.ParseInt(getenv(cpuLimitEnv), 10, 64)
	if err != nil || v <= 0 {
		return 0, false
	}
	return v, true
}

// sizeScheduler sets GOMAXPROCS from the CPU limit, unless GOMAXPROCS is set explicitly or no
// limit is given (then the Go runtime's own default stands). It returns the limit it read.
func sizeScheduler() (milli int64, ok bool) {
	milli, ok = cpuLimitMillicores(os.Getenv)
	if ok && os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(procsForLimit(milli))
	}
	return milli, ok
}

// runtimeInfo is the "runtime" object of /stats: what the process was sized by.
func runtimeInfo(milli int64, ok bool) map[string]any {
	info := map[string]any{"gomaxprocs": runtime.GOMAXPROCS(0), "cpuLimitMillicores": nil}
	if ok {
		info["cpuLimitMillicores"] = milli
	}
	return info
}
