package main

// The memory-N kinds for a garbage-collected runtime (crates/harness/src/memory.rs and split.rs's
// memory_side): N connection pairs created, stepped through their handshakes in lockstep and held
// open.
//
// heap (both sides in this process): gc_live_heap_per_connection_bytes, the live heap after a full
// collection. Go's runtime keeps no per-side tally of bytes held, so each side's share is found by
// letting it go: live heap with every connection held, then with the servers dropped, then before
// any was made; each difference over N. The harness's own objects (links, vectors, the handshake
// coroutines) are made before the first reading and kept until the last, so only the library's
// objects differ between readings.
//
// rss (one side per process): the process's peak resident size, and its growth per connection from
// just before the N connections, as the harness reads them from /proc.

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
)

// memoryPipeCapacity is each pipe's capacity in memory-N: enough for a flight, small enough for
// 10,000 links (the time measure's 64 KiB would take 1.3 GB). A pipe that grew is set back to it
// before the heap is read (see restore), so that its growth is charged to neither side.
const memoryPipeCapacity = 4 << 10

// connections is how many connection pairs a memory-N kind holds open; 0 for the other kinds.
func (k Kind) connections() int {
	switch k {
	case Memory100:
		return 100
	case Memory1000:
		return 1000
	case Memory10000:
		return 10000
	}
	return 0
}

// liveHeap is the bytes of live objects on Go's heap: two full collections (the second empties
// what sync.Pool's victim caches kept through the first, crypto/tls's buffers among them), then
// HeapAlloc, which after a collection that has swept everything counts the objects still
// reachable, in the size classes the allocator hands out.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var stats runtime.MemStats
	runtime.ReadMemStats(&stats)
	return stats.HeapAlloc
}

// grew is now above then as a signed difference.
func grew(now, then uint64) float64 { return float64(now) - float64(then) }

// memoryConns are N connections of one side with what the harness gives them: a link each and a
// handshake coroutine each (the N handshakes are suspended at once, so one coroutine per side, as
// the time driver has, would not do), all made before any heap is read.
type memoryConns struct {
	links  []*link
	hs     []*handshaker
	states []progress
}

func newMemoryConns(n, sides int) *memoryConns {
	m := &memoryConns{links: make([]*link, n), hs: make([]*handshaker, sides*n), states: make([]progress, n)}
	for i := range m.links {
		m.links[i] = newLinkCap(memoryPipeCapacity)
	}
	for i := range m.hs {
		m.hs[i] = newHandshaker()
	}
	return m
}

// restore gives the harness's objects back the sizes they had before the handshakes: every pipe
// is empty, and one that grew inside a library's write gets its first capacity again; no
// coroutine keeps a connection.
func (m *memoryConns) restore() {
	for _, l := range m.links {
		for _, p := range []*pipe{&l.toServer, &l.toClient} {
			if cap(p.buf) != memoryPipeCapacity {
				p.buf = make([]byte, 0, memoryPipeCapacity)
			}
			p.start = 0
		}
	}
	for _, h := range m.hs {
		h.release()
	}
}

// stop ends the coroutines, once nothing is measured any more.
func (m *memoryConns) stop() {
	for _, h := range m.hs {
		h.stop()
	}
}

// manyTurns is N connection pairs in this process, stepped in lockstep: every client, then every
// server, round after round (memory.rs's lockstep).
type manyTurns struct {
	clients, servers []*conn
	m                *memoryConns
}

func (t *manyTurns) turn(side Side) (bool, error) {
	conns := t.clients
	if side == Server {
		conns = t.servers
	}
	done := true
	for i, c := range conns {
		d, err := turnOne(c, side, t.m.links[i], &t.m.states[i], &meter{})
		if err != nil {
			return false, err
		}
		done = done && d
	}
	return done, nil
}

func (t *manyTurns) unread() int {
	n := 0
	for _, l := range t.m.links {
		n += l.inFlight()
	}
	return n
}

// memorySample is the heap measure of memory-N with both sides in this process.
func memorySample(p *pair) (*SampleReport, error) {
	n := p.scenario.Kind.connections()
	// One pair first: what crypto/tls and the runtime set up once per process is then in every reading.
	if err := p.checkedHandshake(&meter{}, false); err != nil {
		return nil, err
	}
	m := newMemoryConns(n, 2)
	defer m.stop()
	clients, servers := make([]*conn, n), make([]*conn, n)
	base := liveHeap()
	for i, l := range m.links {
		clients[i] = p.configs[Client].openWith(l.end(Client), m.hs[2*i])
		clients[i].create()
		servers[i] = p.configs[Server].openWith(l.end(Server), m.hs[2*i+1])
		servers[i].create()
	}
	if err := completeHandshakes(&manyTurns{clients: clients, servers: servers, m: m}); err != nil {
		return nil, err
	}
	for i := range clients {
		if err := p.check([2]*conn{clients[i], servers[i]}, false); err != nil {
			return nil, err
		}
	}
	m.restore()
	held := liveHeap()
	// The servers go; the clients stay reachable until the reading after it.
	clear(servers)
	clientsOnly := liveHeap()
	runtime.KeepAlive(clients)
	perConnection := func(bytes float64) float64 { return bytes / float64(n) }
	values := []MetricValue{
		{Side: Client, Metric: "gc_live_heap_per_connection_bytes", Value: perConnection(grew(clientsOnly, base))},
		{Side: Server, Metric: "gc_live_heap_per_connection_bytes", Value: perConnection(grew(held, clientsOnly))},
	}
	return &SampleReport{
		ClientLibrary: library(), ServerLibrary: library(), Iterations: uint64(n), Values: values,
		Negotiated: p.gates.list(),
	}, nil
}

// memorySide is the rss measure of memory-N, this process's side: one connection first (lazy
// initialisation), then a full collection that gives back to the system what the heap does not
// hold, the peak reset, and N connections through their handshakes in lockstep with the peer
// process's N. The peak then includes the garbage the handshakes left for a collection that had
// not come yet: Go's heap grows to twice its live size (GOGC=100) before it collects.
func memorySide(side Side, s Scenario, cr *credentials, peer *relay) (*SampleReport, error) {
	n := s.Kind.connections()
	cfg := newConfig(side, s, cr)
	defer cfg.close()
	var g gates
	first := newMemoryConns(1, 1)
	defer first.stop()
	if _, err := heldOpen(peer, s, cfg, &g, first); err != nil {
		return nil, err
	}
	m := newMemoryConns(n, 1)
	defer m.stop()
	debug.FreeOSMemory()
	before, err := resetPeakRSS()
	if err != nil {
		return nil, err
	}
	conns, err := heldOpen(peer, s, cfg, &g, m)
	if err != nil {
		return nil, err
	}
	peak, err := statusField("VmHWM")
	if err != nil {
		return nil, err
	}
	runtime.KeepAlive(conns)
	values := []MetricValue{
		{Side: side, Metric: "rss_peak_bytes", Value: float64(peak)},
		{Side: side, Metric: "rss_per_connection_bytes", Value: grew(peak, before) / float64(n)},
	}
	report := &SampleReport{Iterations: uint64(n), Values: values, Negotiated: g.list()}
	if side == Client {
		report.ClientLibrary = library()
	} else {
		report.ServerLibrary = library()
	}
	return report, nil
}

// heldOpen opens this side's connections, one per link of m, and takes them through their
// handshakes in turns with the peer's, their gates passed.
func heldOpen(peer *relay, s Scenario, cfg *sideConfig, g *gates, m *memoryConns) ([]*conn, error) {
	side := peer.side
	conns := make([]*conn, len(m.links))
	for i, l := range m.links {
		conns[i] = cfg.openWith(l.end(side), m.hs[i])
		conns[i].create()
	}
	if err := completeHandshakes(&splitManyTurns{relay: peer, conns: conns, m: m}); err != nil {
		return nil, err
	}
	for _, c := range conns {
		n, err := c.negotiated()
		if err != nil {
			return nil, failed(side, "negotiated parameters", err)
		}
		if err := g.check(side, s, n, false); err != nil {
			return nil, err
		}
	}
	return conns, nil
}

// splitManyTurns is this side's N connections with the peer process's N (split.rs's Split): a
// turn of this side steps each and sends the peer one Flights message with a flight per
// connection; the peer's turn is its answer in kind.
type splitManyTurns struct {
	relay      *relay
	conns      []*conn
	m          *memoryConns
	sent       int
	peerUnread int
}

func (t *splitManyTurns) turn(side Side) (bool, error) {
	own := t.relay.side
	if side == own {
		flights, done, unread := make([][]byte, len(t.conns)), true, 0
		t.sent = 0
		for i, c := range t.conns {
			d, err := turnOne(c, side, t.m.links[i], &t.m.states[i], &meter{})
			if err != nil {
				return false, err
			}
			done = done && d
			flights[i] = t.m.links[i].takeWrittenBy(side)
			t.sent += len(flights[i])
			unread += t.m.links[i].unreadBy(side)
		}
		return done, t.relay.send(message{tag: tagFlights, flights: flights, done: done, unread: uint32(unread)})
	}
	msg, err := t.relay.recv()
	if err != nil {
		return false, err
	}
	if msg.tag != tagFlights || len(msg.flights) != len(t.conns) {
		return false, unexpected("one flight per connection")
	}
	for i, f := range msg.flights {
		t.m.links[i].deliverTo(own, f)
	}
	t.sent, t.peerUnread = 0, int(msg.unread)
	return msg.done, nil
}

func (t *splitManyTurns) unread() int {
	n := t.sent + t.peerUnread
	for _, l := range t.m.links {
		n += l.unreadBy(t.relay.side)
	}
	return n
}

// resetPeakRSS resets the process's peak resident size to its current one (Linux: `5` into
// clear_refs) and returns the peak as reset: the runtime's own threads may move the resident
// size before a later reading of it, which a growth from that reading would count.
func resetPeakRSS() (uint64, error) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return 0, fmt.Errorf("resetting the peak RSS: %w", err)
	}
	return statusField("VmHWM")
}

// statusField is a /proc/self/status field in bytes, or why it cannot be read.
func statusField(name string) (uint64, error) {
	if v := procStatus(name); v != nil {
		return *v, nil
	}
	return 0, fmt.Errorf("/proc/self/status has no %s", name)
}
