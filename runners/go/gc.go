package main

// The collector's work over a time sample's measured part (docs/runner-protocol.md: the reply's
// gc_collections, gc_ms and measured_ms, and each measured side's gc_percent).

import (
	"runtime/metrics"
	"time"
)

// GCReport is what the collector did while a time sample measured: the cycles that completed,
// their CPU time (with one P, time taken from the measured goroutine), and the wall time of the
// measured part, from its first measured call to the end of its last.
type GCReport struct {
	Collections uint64  `json:"gc_collections"`
	GCMs        float64 `json:"gc_ms"`
	MeasuredMs  float64 `json:"measured_ms"`
}

const (
	gcCyclesMetric = "/gc/cycles/total:gc-cycles"
	// The runtime adds a cycle's mark work (assists, background and idle workers) and its last
	// stop-the-world pause when the cycle ends, and its first pause when it begins: a window
	// sees a cycle that ends inside it in full, and the first pause of one that ends after it.
	gcCPUMetric = "/cpu/classes/gc/total:cpu-seconds"
)

// gcWindow reads the runtime's counters and the monotonic clock once before a sample's measured
// loop (begin) and once after it (end): never inside the measured calls, and nothing it does
// between the two allocates.
type gcWindow struct {
	read   [2]metrics.Sample
	cycles uint64
	cpu    float64
	start  time.Time
	began  bool
	report *GCReport
}

func newGCWindow() *gcWindow {
	w := &gcWindow{}
	w.read[0].Name, w.read[1].Name = gcCyclesMetric, gcCPUMetric
	return w
}

// begin: the counters first, then the clock, so that reading them is outside the window.
func (w *gcWindow) begin() {
	metrics.Read(w.read[:])
	w.cycles, w.cpu = w.read[0].Value.Uint64(), w.read[1].Value.Float64()
	w.began = true
	w.start = time.Now()
}

// end: the clock first, then the counters.
func (w *gcWindow) end() {
	measured := time.Since(w.start)
	metrics.Read(w.read[:])
	w.report = &GCReport{
		Collections: w.read[0].Value.Uint64() - w.cycles,
		GCMs:        max(w.read[1].Value.Float64()-w.cpu, 0) * 1000,
		MeasuredMs:  float64(measured) / float64(time.Millisecond),
	}
}

// gcValues is gc_percent for each side this process measured: the process's collector time in
// % of the measured part's wall time, the same value for both sides of a pair in one process.
func gcValues(r *GCReport, sides ...Side) []MetricValue {
	if r == nil || r.MeasuredMs <= 0 {
		return nil
	}
	var values []MetricValue
	for _, side := range sides {
		values = append(values, MetricValue{
			Side: side, Metric: "gc_percent", Value: 100 * r.GCMs / r.MeasuredMs, Seconds: r.MeasuredMs / 1000,
		})
	}
	return values
}
