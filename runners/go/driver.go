package main

// The time measure in one process (crates/harness/src/driver.rs): each side has its own clock,
// which runs only inside calls into its side of crypto/tls; checks, digests and bookkeeping
// happen outside both clocks.

import (
	"bytes"
	"crypto/sha256"
	"hash"
	"hash/crc32"
	"math/rand/v2"
	"slices"
	"sync"
	"syscall"
	"time"
	"unsafe"
)

const (
	// transferWriteSize is the plaintext of each write in a transfer (the TLS maximum record).
	transferWriteSize = 16 << 10
	// transferMinWrites: a transfer sample moves at least 64 MiB.
	transferMinWrites = (64 << 20) / transferWriteSize
)

// sampleSpec is how long a time sample lasts: warm up, then measure until each side's clock
// has run for the minimum; with fullSpeed (--full-speed, the probe's reference), only the
// stretches of the loop at full speed count (speed.go).
type sampleSpec struct {
	warmup, minTime time.Duration
	fullSpeed       float64
}

func (s sampleSpec) warming(started time.Time) bool { return time.Since(started) < s.warmup }

func (s sampleSpec) reached(c *clock) bool { return c.elapsed >= s.minTime }

func (s sampleSpec) bothReached(clocks [2]*clock) bool {
	return s.reached(clocks[Client]) && s.reached(clocks[Server])
}

// done: the measured part is over. At least one iteration, so that a rate is never 0/0.
func (s sampleSpec) done(iterations, minIterations uint64, bothReached bool) bool {
	return iterations >= max(minIterations, 1) && bothReached
}

// meter is what is taken around each call into a side's library: its clock (time), its
// allocations (heap), or nothing. One concrete type, so that the calls it wraps stay on the
// stack.
type meter struct {
	clocks [2]*clock
	heap   *heapTally
}

func (m *meter) call(side Side, f func()) {
	switch {
	case m.heap != nil:
		m.heap.call(side, f)
	case m.clocks[side] != nil:
		m.clocks[side].time(f)
	default:
		f()
	}
}

// clock is the wall time spent inside one side's library calls, and the thread's CPU time
// over the same calls.
type clock struct {
	elapsed time.Duration
	cpu     time.Duration
	regions int64
}

func (c *clock) time(f func()) {
	// The CPU clock is read outside the wall clock's pair: it is a system call, which the
	// wall figure must not include.
	on := cpuClockOn
	var cpuStart time.Duration
	if on {
		cpuStart = threadCPU()
	}
	start := time.Now()
	f()
	c.elapsed += time.Since(start)
	if on {
		c.cpu += threadCPU() - cpuStart
		c.regions++
	}
}

// cpuSeconds is the CPU time of the timed calls less what reading the CPU clock adds to each;
// false when the CPU clock was off, or when that cost is all it counted (calls too short for it
// to tell: a rate of them would be a figure it did not measure).
func (c *clock) cpuSeconds() (float64, bool) {
	if c.regions == 0 {
		return 0, false
	}
	seconds := (c.cpu - cpuOverhead()*time.Duration(c.regions)).Seconds()
	return seconds, seconds > 0
}

// cpuClockOn is the runner's --cpu-clock.
var cpuClockOn = true

// timespec is where the kernel writes the CPU clock: a package variable, so that reading it
// allocates nothing (only the driver's thread reads it).
var timespec syscall.Timespec

// threadCPU reads the calling thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, a system call: it
// is not in the vDSO). Every side runs on the driver's thread, which main locks (see main.go
// and handshaker), so this thread's clock is the running side's.
func threadCPU() time.Duration {
	const clockThreadCPUTimeID = 3
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&timespec)), 0)
	return time.Duration(timespec.Nano())
}

// cpuOverhead is what the CPU clock counts in an empty region beyond what the wall clock
// counts (part of two clock reads falls inside each region): the median over 301 empty
// regions timed as clock.time times them, measured once per process.
var cpuOverhead = sync.OnceValue(func() time.Duration {
	extra := make([]time.Duration, 301)
	for i := range extra {
		cpuStart := threadCPU()
		start := time.Now()
		wall := time.Since(start)
		extra[i] = max(threadCPU()-cpuStart-wall, 0)
	}
	slices.Sort(extra)
	return extra[len(extra)/2]
})

// sideValues are a side's rates from its clock: by wall time, and by the thread's CPU time.
func sideValues(side Side, kind Kind, iterations uint64, c *clock) []MetricValue {
	rate := func(seconds float64) float64 {
		if kind == Transfer {
			return float64(iterations) * transferWriteSize / 1e6 / seconds
		}
		return float64(iterations) / seconds
	}
	wallMetric, cpuMetric := "handshakes_per_s", "cpu_handshakes_per_s"
	switch {
	case kind == Transfer:
		wallMetric, cpuMetric = "mb_per_s", "cpu_mb_per_s"
	case kind.isContext():
		wallMetric, cpuMetric = "contexts_per_s", "cpu_contexts_per_s"
	}
	wall := c.elapsed.Seconds()
	values := []MetricValue{{Side: side, Metric: wallMetric, Value: rate(wall), Seconds: wall}}
	if cpu, ok := c.cpuSeconds(); ok {
		values = append(values, MetricValue{Side: side, Metric: cpuMetric, Value: rate(cpu), Seconds: cpu})
	}
	return values
}

// transferPayload is what the server sends: 1 MiB of random-looking bytes, the same every run.
func transferPayload() []byte {
	payload := make([]byte, 1<<20)
	rng := rand.NewChaCha8([32]byte{0x71, 0x52, 0xbe, 0x4c})
	rng.Read(payload)
	return payload
}

// pair is a client config and a server config of one scenario, on one link.
type pair struct {
	scenario Scenario
	configs  [2]*sideConfig
	link     *link
	gates    gates
}

func newPair(s Scenario, cr *credentials, withLog bool) *pair {
	configs := [2]*sideConfig{newConfig(Client, s, cr), newConfig(Server, s, cr)}
	return &pair{scenario: s, configs: configs, link: newLink(withLog)}
}

// close ends what the pair's configs keep running (sideConfig.close); each sample closes its pair.
func (p *pair) close() {
	for _, c := range p.configs {
		if c != nil {
			c.close()
		}
	}
}

// handshake makes new connections on the empty link and takes them through their handshakes.
// Creating them counts in each side's cost.
func (p *pair) handshake(m *meter) ([2]*conn, error) {
	p.link.clear()
	var conns [2]*conn
	for _, side := range []Side{Client, Server} {
		c := p.configs[side].open(p.link.end(side))
		m.call(side, c.create)
		conns[side] = c
	}
	return conns, completeHandshakes(&inProcess{conns: conns, link: p.link, meter: m})
}

// check passes both sides' views through the gates.
func (p *pair) check(conns [2]*conn, resumed bool) error {
	for _, side := range []Side{Client, Server} {
		n, err := conns[side].negotiated()
		if err != nil {
			return failed(side, "negotiated parameters", err)
		}
		if err := p.gates.check(side, p.scenario, n, resumed); err != nil {
			return err
		}
	}
	return nil
}

func (p *pair) checkedHandshake(m *meter, resumed bool) error {
	conns, err := p.handshake(m)
	if err != nil {
		return err
	}
	return p.check(conns, resumed)
}

// timeSample measures one sample of the time measure with both sides in this process.
func timeSample(p *pair, spec sampleSpec) (*SampleReport, error) {
	var loop measured
	var err error
	gc := newGCWindow()
	if p.scenario.Kind == Transfer {
		loop, err = p.transfer(spec, gc)
	} else {
		loop, err = p.handshakes(spec, gc)
	}
	if err != nil {
		return nil, err
	}
	iterations, clocks := loop.iterations, loop.clocks
	values := append(sideValues(Client, p.scenario.Kind, iterations, clocks[Client]),
		sideValues(Server, p.scenario.Kind, iterations, clocks[Server])...)
	values = append(values, gcValues(gc.report, Client, Server)...)
	return &SampleReport{
		ClientLibrary: library(), ServerLibrary: library(), Iterations: iterations, Values: values,
		Negotiated: p.gates.list(), GCReport: gc.report, CPUSpeed: loop.cpuSpeed,
	}, nil
}

// measured is what a measured loop did: its iterations, each side's clock over them, and how
// fast the CPU ran where the loop was judged at full speed.
type measured struct {
	iterations uint64
	clocks     [2]*clock
	cpuSpeed   *CPUSpeed
}

// measure runs iteration (a handshake, or a 16 KiB write) on both sides' clocks until the sample
// is done: minIterations, and each side's minimum time; judged where the spec gives fullSpeed.
func measure(spec sampleSpec, minIterations uint64, iteration func(*meter) error) (measured, error) {
	if spec.fullSpeed > 0 {
		return gated(spec, newGate(spec.fullSpeed), minIterations, iteration)
	}
	loop := measured{clocks: [2]*clock{{}, {}}}
	m := &meter{clocks: loop.clocks}
	for !spec.done(loop.iterations, minIterations, spec.bothReached(loop.clocks)) {
		if err := iteration(m); err != nil {
			return loop, err
		}
		loop.iterations++
	}
	return loop, nil
}

// gated is measure judged at full speed (speed.go): iteration again and again, a stretch of them
// between two probes counting only where both found the CPU at full speed, until the counted
// ones make a sample. Where they have not by gateBound times that, every stretch counts, and
// cpuSpeed says so.
func gated(spec sampleSpec, judge *gate, minIterations uint64, iteration func(*meter) error) (measured, error) {
	counted, all := measured{clocks: [2]*clock{{}, {}}}, measured{clocks: [2]*clock{{}, {}}}
	stretch := [2]*clock{{}, {}}
	m := &meter{clocks: stretch}
	bound := sampleSpec{minTime: gateBound * spec.minTime}
	for {
		*stretch[Client], *stretch[Server] = clock{}, clock{}
		var n uint64
		for n == 0 || !judge.due() {
			if err := iteration(m); err != nil {
				judge.finish(false)
				return counted, err
			}
			n++
		}
		if judge.judge() {
			counted.add(stretch, n)
		}
		all.add(stretch, n)
		switch {
		case spec.done(counted.iterations, minIterations, spec.bothReached(counted.clocks)):
			counted.cpuSpeed = judge.finish(true)
			return counted, nil
		case bound.bothReached(all.clocks) && spec.done(all.iterations, minIterations, spec.bothReached(all.clocks)):
			all.cpuSpeed = judge.finish(false)
			return all, nil
		}
	}
}

// add counts a stretch of n iterations timed by stretch.
func (l *measured) add(stretch [2]*clock, n uint64) {
	l.iterations += n
	for side, c := range stretch {
		l.clocks[side].elapsed += c.elapsed
		l.clocks[side].cpu += c.cpu
		l.clocks[side].regions += c.regions
	}
}

// handshakes: a first, unmeasured full handshake leaves the session the first resumption
// resumes; warm-up; then handshakes, each on new connections, until both clocks reach the
// minimum. gc is read around the measured loop.
func (p *pair) handshakes(spec sampleSpec, gc *gcWindow) (measured, error) {
	if err := p.checkedHandshake(&meter{}, false); err != nil {
		return measured{}, err
	}
	resumed := p.scenario.Kind.isResumption()
	for started := time.Now(); spec.warming(started); {
		if err := p.checkedHandshake(&meter{}, resumed); err != nil {
			return measured{}, err
		}
	}
	gc.begin()
	loop, err := measure(spec, 0, func(m *meter) error { return p.checkedHandshake(m, resumed) })
	gc.end()
	return loop, err
}

// transfer: after an unmeasured handshake, the server writes 16 KiB and the client reads it,
// until 64 MiB moved and both clocks reached the minimum; then every byte is checked by
// length and digest. gc is read around the measured loop.
func (p *pair) transfer(spec sampleSpec, gc *gcWindow) (measured, error) {
	conns, err := p.handshake(&meter{})
	if err == nil {
		err = p.check(conns, false)
	}
	if err != nil {
		return measured{}, err
	}
	s := &stream{
		payload: transferPayload(), inbox: make([]byte, transferWriteSize), sent: newLocalTally(), received: newLocalTally(),
	}
	for started := time.Now(); spec.warming(started); {
		if err := s.sendOne(conns, &meter{}); err != nil {
			return measured{}, err
		}
	}
	gc.begin()
	loop, err := measure(spec, transferMinWrites, func(m *meter) error { return s.sendOne(conns, m) })
	gc.end()
	if err != nil {
		return loop, err
	}
	// Whatever the library still holds comes out now, outside the clocks.
	for {
		n, err := s.receive(conns[Client], &meter{})
		if err != nil {
			return loop, err
		}
		if n == 0 {
			break
		}
	}
	return loop, checkTransfer(s.sent, s.received)
}

// stream is a transfer's application data and what each side has seen of it.
type stream struct {
	payload        []byte
	offset         int
	inbox          []byte
	sent, received *tally
}

func (s *stream) sendOne(conns [2]*conn, m *meter) error {
	data := s.payload[s.offset : s.offset+transferWriteSize]
	s.offset = (s.offset + transferWriteSize) % len(s.payload)
	// Digest before sending: the records should stay in cache between the write and the read,
	// as on a real connection's hot path.
	s.sent.add(data)
	var err error
	m.call(Server, func() { err = conns[Server].send(data) })
	if err != nil {
		return failed(Server, "write", err)
	}
	_, err = s.receive(conns[Client], m)
	return err
}

// receive drains what the client can decrypt now into the inbox, then digests it.
func (s *stream) receive(c *conn, m *meter) (int, error) {
	var n int
	var err error
	m.call(Client, func() { n, err = c.receiveAll(s.inbox) })
	if err != nil {
		return 0, failed(Client, "read", err)
	}
	s.received.add(s.inbox[:n])
	return n, nil
}

// tally is one side's view of a transfer: byte count and a digest of the plaintext in order.
type tally struct {
	bytes  uint64
	digest hash.Hash
}

// newTally digests with SHA-256, which a split pair's Tally carries to a runner of another
// language (docs/runner-protocol.md).
func newTally() *tally { return &tally{digest: sha256.New()} }

// newLocalTally digests with CRC-32C, for a pair in this process, where both tallies are ours.
// SHA-256 ran at 1.5 GB/s here, slower than crypto/tls's AES-GCM, and twice per record it took
// most of a transfer sample's wall time (outside the clocks); CRC-32C runs at 30 GB/s. Its 32
// bits catch any corrupted stretch of up to 32 bits and miss one random corruption in 2^32,
// enough to tell whether the library handed back what was sent.
func newLocalTally() *tally { return &tally{digest: crc32.New(crc32.MakeTable(crc32.Castagnoli))} }

func (t *tally) add(b []byte) {
	t.bytes += uint64(len(b))
	t.digest.Write(b)
}

func (t *tally) sum() []byte { return t.digest.Sum(nil) }

// checkTransfer: the receiver got exactly what the sender sent.
func checkTransfer(sent, received *tally) error {
	return checkTally(sent.bytes, sent.sum(), received.bytes, received.sum())
}

func checkTally(sentBytes uint64, sentDigest []byte, receivedBytes uint64, receivedDigest []byte) error {
	if sentBytes != receivedBytes {
		return gateFailed("sent %d bytes, received %d", sentBytes, receivedBytes)
	}
	if !bytes.Equal(sentDigest, receivedDigest) {
		return gateFailed("received %d bytes whose digest differs from the sent data's", receivedBytes)
	}
	return nil
}
