package main

import "testing"

func TestGomaxprocsIsOnePerStartedCpuOfTheLimitAtLeastOne(t *testing.T) {
	for milli, want := range map[int64]int{1: 1, 250: 1, 500: 1, 1000: 1, 1001: 2, 1500: 2, 2000: 2, 3500: 4} {
		if got := procsForLimit(milli); got != want {
			t.Errorf("procsForLimit(%d) = %d, want %d", milli, got, want)
		}
	}
}

func TestTheLimitIsReadOnlyAsAPositiveInteger(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == cpuLimitEnv {
				return v
			}
			return ""
		}
	}
	if m, ok := cpuLimitMillicores(env("2000")); !ok || m != 2000 {
		t.Errorf("2000 read as %d, %v", m, ok)
	}
	for _, bad := range []string{"", "0", "-5", "1.5", "2"+"x"} {
		if _, ok := cpuLimitMillicores(env(bad)); ok {
			t.Errorf("%q accepted as a limit", bad)
		}
	}
}

func TestStringsReversesUppercasesAndJoinsLikeTheJvmStacks(t *testing.T) {
	if got := manipulate(defaultStringsInput); got != "ELPOEP ,OLLEH|Hello, People" {
		t.Errorf("manipulate = %q", got)
	}
	for s, ok := range map[string]bool{"": false, "é": false, "a \"q\"": true, "x\n": false} {
		if validStringsInput(s) != ok {
			t.Errorf("validStringsInput(%q) = %v", s, !ok)
		}
	}
}
