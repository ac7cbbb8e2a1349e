package main

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

const judgedMinTime = 5 * time.Millisecond

// judgedSample is one sample of name with the loop judged against reference.
func judgedSample(t *testing.T, name string, reference float64) *SampleReport {
	t.Helper()
	if !probeAvailable {
		t.Skip("the probe is written for amd64 only (probe_amd64.s)")
	}
	report, err := timeSample(testPair(t, name, false), sampleSpec{minTime: judgedMinTime, fullSpeed: reference})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if report.CPUSpeed == nil {
		t.Fatalf("%s: no cpu_speed: %+v", name, report)
	}
	return report
}

// seconds is each side's measured seconds, from its wall-time rate.
func seconds(t *testing.T, report *SampleReport, side Side) float64 {
	for _, v := range report.Values {
		if v.Side == side && (v.Metric == "handshakes_per_s" || v.Metric == "mb_per_s") {
			return v.Seconds
		}
	}
	t.Fatalf("no %v rate: %+v", side, report.Values)
	return 0
}

func TestTheProbeTimesThisCPU(t *testing.T) {
	if !probeAvailable {
		t.Skip("the probe is written for amd64 only (probe_amd64.s)")
	}
	if speed := probe(); !(speed > 0) || speed > 1e6 {
		t.Errorf("%v rounds per µs", speed)
	}
}

// A reference every probe passes: every stretch counts, the handshakes are still checked, and
// the thread is back on every CPU it had.
func TestALoopAlwaysAtFullSpeedCountsEveryStretch(t *testing.T) {
	before := allowedCPUs()
	for _, name := range []string{
		"handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
	} {
		report := judgedSample(t, name, 1e-9)
		if j := report.CPUSpeed; !j.Gated || j.FullSpeedShare != 1 || j.Speed < fullSpeed || j.Moves != 0 {
			t.Errorf("%s: %+v", name, *j)
		}
		for _, side := range []Side{Client, Server} {
			if s := seconds(t, report, side); s < judgedMinTime.Seconds() {
				t.Errorf("%s %v: measured %v s", name, side, s)
			}
		}
		if n := report.Negotiated; len(n) != 2 || !strings.HasPrefix(n[0].Negotiated, "1.3 aes-128-gcm x25519") {
			t.Errorf("%s: %+v", name, n)
		}
	}
	if after := allowedCPUs(); !slices.Equal(before, after) {
		t.Errorf("CPUs %v before the loop, %v after", before, after)
	}
}

// A reference no CPU reaches: nothing counts, and at the bound the figures are of every stretch.
func TestALoopNeverAtFullSpeedGoesOnToItsBoundAndSaysSo(t *testing.T) {
	before := allowedCPUs()
	for _, name := range []string{
		"handshake-full_1.2_x25519_ecdsa-p256_aes-128-gcm", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
	} {
		report := judgedSample(t, name, 1e12)
		if j := report.CPUSpeed; j.Gated || j.FullSpeedShare != 0 || j.Speed >= fullSpeed {
			t.Errorf("%s: %+v", name, *j)
		}
		bound := (gateBound * judgedMinTime).Seconds()
		for _, side := range []Side{Client, Server} {
			if s := seconds(t, report, side); s < bound {
				t.Errorf("%s %v: measured %v s, short of the bound %v s", name, side, s, bound)
			}
		}
	}
	if after := allowedCPUs(); !slices.Equal(before, after) {
		t.Errorf("CPUs %v before the loop, %v after", before, after)
	}
}

// The flag and the replies: list says the runner takes it, a sample with it says what its loop
// did, one without says nothing.
func TestFullSpeedIsListedAndOnlyAJudgedSampleReportsCPUSpeed(t *testing.T) {
	list, _ := json.Marshal(run([]string{"list"}, io.Discard, false))
	if strings.Contains(string(list), `"full_speed":true`) != probeAvailable {
		t.Errorf("list: %s", list)
	}
	if !probeAvailable {
		t.Skip("the probe is written for amd64 only (probe_amd64.s)")
	}
	dir := testDataDir(t, ECDSAP256)
	args := []string{"sample", "--client", "go", "--server", "go", "--min-time-ms", "2", "--warmup-ms", "0",
		"--scenario", "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir}
	judged, _ := json.Marshal(run(append(args, "--full-speed", "0.000001"), io.Discard, false))
	if !strings.Contains(string(judged), `"cpu_speed":{"gated":true,"speed":`) {
		t.Errorf("judged: %s", judged)
	}
	plain, _ := json.Marshal(run(args, io.Discard, false))
	if !strings.Contains(string(plain), `"status":"ok"`) || strings.Contains(string(plain), "cpu_speed") {
		t.Errorf("not judged: %s", plain)
	}
}
