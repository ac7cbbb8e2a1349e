package main

import (
	"encoding/json"
	"io"
	"math"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// gcReply is a time sample's reply as the orchestrator reads it, with the collector's fields.
type gcReply struct {
	Status        string   `json:"status"`
	Reason        string   `json:"reason"`
	GCCollections *uint64  `json:"gc_collections"`
	GCMs          *float64 `json:"gc_ms"`
	MeasuredMs    *float64 `json:"measured_ms"`
	Values        []struct {
		Side, Metric   string
		Value, Seconds float64
	} `json:"values"`
}

func gcReplyOf(t *testing.T, reply any) gcReply {
	t.Helper()
	line, err := json.Marshal(reply)
	if err != nil {
		t.Fatal(err)
	}
	var r gcReply
	if err := json.Unmarshal(line, &r); err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	return r
}

// pauseMsDuring: the stop-the-world pause CPU time (ms) the runtime counted while f ran.
func pauseMsDuring(f func()) float64 {
	read := []metrics.Sample{{Name: "/cpu/classes/gc/pause:cpu-seconds"}}
	metrics.Read(read)
	before := read[0].Value.Float64()
	f()
	metrics.Read(read)
	return (read[0].Value.Float64() - before) * 1000
}

// checkGC: the three fields are there and agree with each other and with gc_percent, which the
// sides in wantSides carry and no other. pauseMs is the pause time counted while r was made: a
// cycle's first pause is counted when it begins, so a sample that no cycle ended in can still
// hold that pause, and nothing more.
func checkGC(t *testing.T, what string, r gcReply, pauseMs, minMs float64, wantSides ...string) {
	t.Helper()
	if r.Status != "ok" {
		t.Fatalf("%s: %+v", what, r)
	}
	if r.GCCollections == nil || r.GCMs == nil || r.MeasuredMs == nil {
		t.Fatalf("%s: gc_collections %v, gc_ms %v, measured_ms %v", what, r.GCCollections, r.GCMs, r.MeasuredMs)
	}
	gcMs, measured := *r.GCMs, *r.MeasuredMs
	if gcMs < 0 || gcMs > measured || measured < minMs {
		t.Errorf("%s: gc_ms %g, measured_ms %g (at least %g)", what, gcMs, measured, minMs)
	}
	if *r.GCCollections == 0 && gcMs > pauseMs+1e-9 {
		t.Errorf("%s: %g ms of collection without a collection (%g ms of pauses)", what, gcMs, pauseMs)
	}
	seen := map[string]bool{}
	for _, v := range r.Values {
		if v.Metric != "gc_percent" {
			continue
		}
		seen[v.Side] = true
		if want := 100 * gcMs / measured; math.Abs(v.Value-want) > 1e-9*max(1, want) {
			t.Errorf("%s: %s gc_percent %g, want %g", what, v.Side, v.Value, want)
		}
		if math.Abs(v.Seconds-measured/1000) > 1e-12 {
			t.Errorf("%s: %s gc_percent over %g s, measured %g ms", what, v.Side, v.Seconds, measured)
		}
	}
	if len(seen) != len(wantSides) {
		t.Errorf("%s: gc_percent for %v, want %v: %+v", what, seen, wantSides, r.Values)
	}
	for _, side := range wantSides {
		if !seen[side] {
			t.Errorf("%s: no gc_percent for the %s: %+v", what, side, r.Values)
		}
	}
}

// Every time sample says what the collector did while it measured, for both sides of a pair in
// one process; the other measures do not.
func TestATimeSampleReportsTheCollectorsWorkOverItsMeasuredPart(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	for _, scenario := range []string{
		"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "handshake-resume-ticket_1.2_x25519_ecdsa-p256_aes-128-gcm",
		"transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
	} {
		var r gcReply
		pauses := pauseMsDuring(func() {
			r = gcReplyOf(t, run([]string{"sample", "--client", "go", "--server", "go", "--scenario", scenario,
				"--min-time-ms", "10", "--warmup-ms", "1", "--data-dir", dir}, io.Discard, false))
		})
		checkGC(t, scenario, r, pauses, 10, "client", "server")
	}
	r := gcReplyOf(t, run([]string{"sample", "--measure", "io", "--client", "go", "--server", "go",
		"--scenario", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir}, io.Discard, false))
	if r.Status != "ok" || r.GCCollections != nil || r.GCMs != nil || r.MeasuredMs != nil {
		t.Errorf("io: %+v", r)
	}
	for _, v := range r.Values {
		if v.Metric == "gc_percent" {
			t.Errorf("io: %+v", r.Values)
		}
	}
}

// Garbage made in the measured part is collected there, and counted: with GOGC at 1% the
// handshakes' garbage sets off cycle after cycle.
func TestCollectionsInTheMeasuredPartAreCounted(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(1))
	p := testPair(t, "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", false)
	report, err := timeSample(p, sampleSpec{minTime: 20e6})
	if err != nil {
		t.Fatal(err)
	}
	r := gcReplyOf(t, replyOf(report, nil))
	checkGC(t, "GOGC=1", r, 0, 20, "client", "server")
	if *r.GCCollections < 1 || *r.GCMs <= 0 {
		t.Errorf("GOGC=1: %d collections, %g ms", *r.GCCollections, *r.GCMs)
	}
}

// A side of a split pair reports the collector of its own process, under its own side only.
func TestASplitSideReportsItsOwnCollector(t *testing.T) {
	dir := testDataDir(t, ECDSAP256)
	for _, name := range []string{
		"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm",
	} {
		s, _ := ParseScenario(name)
		var client, server *SampleReport
		pauses := pauseMsDuring(func() { client, server = splitPairSample(t, dir, s, 5e6) })
		checkGC(t, name+" client", gcReplyOf(t, replyOf(client, nil)), pauses, 5, "client")
		checkGC(t, name+" server", gcReplyOf(t, replyOf(server, nil)), pauses, 5, "server")
	}
}
