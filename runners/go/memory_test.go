package main

import (
	"os"
	"runtime"
	"testing"
)

func metricOf(t *testing.T, r *SampleReport, side Side, metric string) float64 {
	t.Helper()
	for _, v := range r.Values {
		if v.Side == side && v.Metric == metric {
			return v.Value
		}
	}
	t.Fatalf("no %s %s in %+v", side, metric, r.Values)
	return 0
}

// The live heap after a full collection: objects kept reachable are counted, garbage is not.
func TestLiveHeapCountsWhatIsReachableAndNotGarbage(t *testing.T) {
	const n, size = 1000, 1024
	base := liveHeap()
	kept := make([][]byte, n)
	for i := range kept {
		kept[i] = make([]byte, size)
		_ = make([]byte, size) // garbage
	}
	held := liveHeap()
	runtime.KeepAlive(kept)
	perObject := grew(held, base) / n
	// A 1 KiB object takes its 1 KiB size class; the slice of headers adds 24 bytes each.
	if perObject < size || perObject > size+256 {
		t.Errorf("live heap grew %.0f bytes per kept 1 KiB object", perObject)
	}
	clear(kept)
	if after := liveHeap(); grew(after, base) > n*64 {
		t.Errorf("the live heap is still %.0f bytes above its start once the objects are dropped", grew(after, base))
	}
}

// memory-N in one process: each side's connections hold a positive, plausible share of the live
// heap, about the same per connection at 100 and 300 connections (the total grows with N), and
// the gates pass on every connection.
func TestMemoryNReportsTheLiveHeapPerConnectionOfEachSide(t *testing.T) {
	for _, name := range []string{
		"memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm",
		"memory-100_1.2_secp256r1_rsa-2048_aes-256-gcm_mtls",
	} {
		p := testPair(t, name, false)
		report, err := memorySample(p)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if report.Iterations != 100 || len(report.Negotiated) != 2 {
			t.Errorf("%s: iterations %d, negotiated %v", name, report.Iterations, report.Negotiated)
		}
		for _, side := range []Side{Client, Server} {
			// A crypto/tls connection after its handshake holds its keys, certificates and buffers:
			// kilobytes, not bytes and not megabytes.
			if v := metricOf(t, report, side, "gc_live_heap_per_connection_bytes"); v < 1000 || v > 1e6 {
				t.Errorf("%s: %s holds %.0f bytes per connection", name, side, v)
			}
		}
	}
	// More connections: the total grows, and the figure per connection stays within a factor of 2.
	small, err := memorySample(testPair(t, "memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm", false))
	if err != nil {
		t.Fatal(err)
	}
	p := testPair(t, "memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm", false)
	p.scenario.Kind = Memory1000
	large, err := memorySample(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, side := range []Side{Client, Server} {
		a := metricOf(t, small, side, "gc_live_heap_per_connection_bytes")
		b := metricOf(t, large, side, "gc_live_heap_per_connection_bytes")
		t.Logf("%s: %.0f bytes per connection at 100, %.0f at 1000", side, a, b)
		if b*1000 < a*100 || b > 2*a || a > 2*b {
			t.Errorf("%s: %.0f bytes per connection at 100, %.0f at 1000", side, a, b)
		}
	}
}

// The rss side of memory-N: both sides, in two "processes" joined by a socket, take N connections
// through their handshakes with one Flights message per turn, and report the process's peak.
func TestMemoryNSplitSidesReportTheResidentSize(t *testing.T) {
	s, _ := ParseScenario("memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm")
	client, server := splitPair(t, testDataDir(t, ECDSAP256), s,
		func(side Side, cr *credentials, peer *os.File) (*SampleReport, error) {
			return memorySide(side, s, cr, &relay{peer: peer, side: side})
		})
	for side, r := range map[Side]*SampleReport{Client: client, Server: server} {
		if r.Iterations != 100 || len(r.Negotiated) != 1 {
			t.Errorf("%s: iterations %d, negotiated %v", side, r.Iterations, r.Negotiated)
		}
		if peak := metricOf(t, r, side, "rss_peak_bytes"); peak < 1<<20 {
			t.Errorf("%s: peak RSS %.0f bytes", side, peak)
		}
		metricOf(t, r, side, "rss_per_connection_bytes")
	}
}
