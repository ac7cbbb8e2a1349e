package main

// The heap measure for a garbage-collected runtime: what Go's runtime allocates on its heap
// inside each side's calls, per handshake (runtime_alloc_bytes_per_handshake,
// runtime_allocations_per_handshake). Allocation, not bytes held: the collector decides when
// memory is given back, so what a connection holds is not a figure the runtime keeps.

import "runtime"

// heapHandshakes is how many handshakes a sample averages over.
const heapHandshakes = 20

// heapTally charges what the runtime allocates inside each side's calls to that side, from
// runtime.ReadMemStats before and after each call: it stops the world and flushes every P's
// allocation cache, so its counts are exact at that moment (runtime/metrics' are not: they
// lag by what the caches hold). Only one side runs at a time, so nothing else allocates
// between the two reads but the side's library (the harness's pipes are sized in advance).
type heapTally struct {
	bytes, objects [2]uint64
	before, after  runtime.MemStats
}

func (h *heapTally) call(side Side, f func()) {
	runtime.ReadMemStats(&h.before)
	f()
	runtime.ReadMemStats(&h.after)
	// Bytes are counted in the size classes the allocator hands out.
	h.bytes[side] += h.after.TotalAlloc - h.before.TotalAlloc
	h.objects[side] += h.after.Mallocs - h.before.Mallocs
}

// heapSample: a seed handshake (it leaves the session a resumption needs) and two more that
// do every lazy initialisation, then the measured handshakes, each on new connections, with
// creating the connections counted.
func heapSample(p *pair) (*SampleReport, error) {
	resumed := p.scenario.Kind.isResumption()
	for _, resume := range []bool{false, resumed, resumed} {
		if err := p.checkedHandshake(&meter{}, resume); err != nil {
			return nil, err
		}
	}
	tally := &heapTally{}
	for range heapHandshakes {
		if err := p.checkedHandshake(&meter{heap: tally}, resumed); err != nil {
			return nil, err
		}
	}
	var values []MetricValue
	for _, side := range []Side{Client, Server} {
		values = append(values,
			MetricValue{Side: side, Metric: "runtime_alloc_bytes_per_handshake",
				Value: float64(tally.bytes[side]) / heapHandshakes},
			MetricValue{Side: side, Metric: "runtime_allocations_per_handshake",
				Value: float64(tally.objects[side]) / heapHandshakes})
	}
	return &SampleReport{
		ClientLibrary: library(), ServerLibrary: library(), Iterations: heapHandshakes, Values: values,
		Negotiated: p.gates.list(),
	}, nil
}
