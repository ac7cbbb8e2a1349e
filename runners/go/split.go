package main

// Split-process pairs (crates/harness/src/split.rs): this process runs one side, with its own
// link, and the peer runner (any language) the other. Between steps, the bytes each side wrote
// are relayed over a socket, outside both clocks. The client decides every next step and the
// server follows, so both processes take the same decisions from the same messages.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// Relay message tags.
const (
	tagFlight  = 0 // a transfer step: bytes, done (the sender's clock reached the minimum), unread
	tagNext    = 1 // what the client decided: seed, warm-up, measure or stop
	tagReached = 2 // the server's clock reached the minimum after a measured handshake
	tagTally   = 3 // a transfer's plaintext: 8-byte LE count, then its SHA-256
	tagAbort   = 4 // the peer stopped, with why
	tagFlights = 5 // a handshake turn: one flight per connection, done, unread
)

type next byte

const (
	nextSeed next = iota
	nextWarmup
	nextMeasure
	nextStop
)

// maxFrame: the largest message (memory-10000's flights, with room to spare); a larger length
// is garbage, not a message.
const maxFrame = 256 << 20

type message struct {
	tag     byte
	bytes   []byte   // tagFlight
	flights [][]byte // tagFlights
	done    bool     // tagFlight, tagFlights
	unread  uint32   // tagFlight, tagFlights
	next    next
	reached bool
	count   uint64 // tagTally
	digest  [32]byte
	reason  string // tagAbort
}

// encode is the frame without its length.
func (m message) encode() []byte {
	frame := []byte{m.tag}
	le32 := func(n uint32) { frame = binary.LittleEndian.AppendUint32(frame, n) }
	flag := func(b bool) byte {
		if b {
			return 1
		}
		return 0
	}
	switch m.tag {
	case tagFlight:
		frame = append(frame, flag(m.done))
		le32(m.unread)
		frame = append(frame, m.bytes...)
	case tagNext:
		frame = append(frame, byte(m.next))
	case tagReached:
		frame = append(frame, flag(m.reached))
	case tagTally:
		frame = binary.LittleEndian.AppendUint64(frame, m.count)
		frame = append(frame, m.digest[:]...)
	case tagAbort:
		frame = append(frame, m.reason...)
	case tagFlights:
		frame = append(frame, flag(m.done))
		le32(m.unread)
		for _, f := range m.flights {
			le32(uint32(len(f)))
			frame = append(frame, f...)
		}
	}
	return frame
}

// decode reads a frame; its slices alias the frame. An abort is an error, the peer's (errPeer).
func decode(frame []byte) (message, error) {
	garbled := func() error {
		tag := "none"
		if len(frame) > 0 {
			tag = strconv.Itoa(int(frame[0]))
		}
		return fmt.Errorf("the peer runner sent a garbled message (tag %s, %d bytes)", tag, len(frame))
	}
	if len(frame) == 0 {
		return message{}, garbled()
	}
	m, rest := message{tag: frame[0]}, frame[1:]
	switch {
	case m.tag == tagFlight && len(rest) >= 5:
		m.done, m.unread, m.bytes = rest[0] != 0, binary.LittleEndian.Uint32(rest[1:5]), rest[5:]
	case m.tag == tagNext && len(rest) == 1 && rest[0] <= byte(nextStop):
		m.next = next(rest[0])
	case m.tag == tagReached && len(rest) == 1:
		m.reached = rest[0] != 0
	case m.tag == tagTally && len(rest) == 40:
		m.count, m.digest = binary.LittleEndian.Uint64(rest[:8]), [32]byte(rest[8:])
	case m.tag == tagAbort:
		return message{}, peerFailed("the peer stopped: %s", lossy(rest))
	case m.tag == tagFlights && len(rest) >= 5:
		m.done, m.unread = rest[0] != 0, binary.LittleEndian.Uint32(rest[1:5])
		m.flights = [][]byte{}
		for body := rest[5:]; len(body) > 0; {
			if len(body) < 4 || len(body)-4 < int(binary.LittleEndian.Uint32(body)) {
				return message{}, garbled()
			}
			n := int(binary.LittleEndian.Uint32(body))
			m.flights = append(m.flights, body[4:4+n])
			body = body[4+n:]
		}
	default:
		return message{}, garbled()
	}
	return m, nil
}

// lossy is text as the harness reads an abort's (String::from_utf8_lossy): each byte that
// begins no valid UTF-8 character becomes U+FFFD.
func lossy(text []byte) string {
	var out strings.Builder
	for _, r := range string(text) {
		out.WriteRune(r)
	}
	return out.String()
}

// relay is the socket to the peer runner, and which side this process is.
type relay struct {
	peer io.ReadWriter
	side Side
	in   bytes.Buffer
}

func (r *relay) send(m message) error {
	frame := m.encode()
	out := binary.LittleEndian.AppendUint32(make([]byte, 0, 4+len(frame)), uint32(len(frame)))
	if _, err := r.peer.Write(append(out, frame...)); err != nil {
		return peerFailed("the peer runner went away: %w", err)
	}
	return nil
}

// recv reads the next message; its slices are valid until the next recv.
func (r *relay) recv() (message, error) {
	var header [4]byte
	if _, err := io.ReadFull(r.peer, header[:]); err != nil {
		return message{}, peerFailed("the peer runner went away: %w", err)
	}
	n := binary.LittleEndian.Uint32(header[:])
	if n > maxFrame {
		return message{}, fmt.Errorf(
			"the peer runner announced a message of %d bytes, more than the %d any message can be", n, maxFrame)
	}
	// Read what arrives rather than allocate what was announced: a peer that dies midway
	// leaves a short frame, not a large buffer.
	r.in.Reset()
	got, err := r.in.ReadFrom(io.LimitReader(r.peer, int64(n)))
	if err != nil {
		return message{}, peerFailed("the peer runner went away: %w", err)
	}
	if got != int64(n) {
		return message{}, peerFailed("the peer runner went away in the middle of a message (%d of %d bytes)", got, n)
	}
	return decode(r.in.Bytes())
}

func unexpected(what string) error {
	return fmt.Errorf("the peer runner sent something else than %s", what)
}

// splitSample measures this process's side of one sample of the time measure.
func splitSample(side Side, s Scenario, cr *credentials, spec sampleSpec, peer io.ReadWriter) (*SampleReport, error) {
	l := &local{relay: &relay{peer: peer, side: side}, link: newLink(false), scenario: s, cfg: newConfig(side, s, cr)}
	defer l.cfg.close()
	var iterations uint64
	var clk *clock
	var err error
	gc := newGCWindow()
	if s.Kind == Transfer {
		iterations, clk, err = l.transfer(spec, gc)
	} else {
		iterations, clk, err = l.handshakes(spec, gc)
	}
	if err != nil {
		// Tell the peer why we stop, so that it reports the cause rather than a broken socket.
		_ = l.relay.send(message{tag: tagAbort, reason: err.Error()})
		return nil, err
	}
	values := append(sideValues(side, s.Kind, iterations, clk), gcValues(gc.report, side)...)
	report := &SampleReport{Iterations: iterations, Values: values, Negotiated: l.gates.list(), GCReport: gc.report}
	if side == Client {
		report.ClientLibrary = library()
	} else {
		report.ServerLibrary = library()
	}
	return report, nil
}

// local is this process's side: its config, its link, its relay to the peer.
type local struct {
	relay    *relay
	link     *link
	scenario Scenario
	cfg      *sideConfig
	gates    gates
}

// handshakes: a seed handshake (full, unmeasured), warm-up for as long as the client says,
// then measured handshakes until both sides' clocks have done their part. gc is read before the
// first measured handshake and once the client has said stop.
func (l *local) handshakes(spec sampleSpec, gc *gcWindow) (uint64, *clock, error) {
	side, clk := l.relay.side, &clock{}
	started := time.Now()
	var iterations uint64
	proposed := nextSeed
	for {
		step, err := l.follow(proposed)
		if err != nil {
			return iterations, clk, err
		}
		if step == nextStop {
			if gc.began {
				gc.end()
			}
			return iterations, clk, nil
		}
		m := &meter{}
		if step == nextMeasure {
			m.clocks[side] = clk
			if !gc.began {
				gc.begin()
			}
		}
		if err := l.checkedHandshake(m, l.scenario.Kind.isResumption() && step != nextSeed); err != nil {
			return 0, clk, err
		}
		// Only the client's proposal counts; the server follows what it is told.
		switch {
		case step == nextMeasure:
			iterations++
			both, err := l.bothReached(spec.reached(clk))
			if err != nil {
				return 0, clk, err
			}
			proposed = nextMeasure
			if spec.done(iterations, 0, both) {
				proposed = nextStop
			}
		case spec.warming(started):
			proposed = nextWarmup
		default:
			proposed = nextMeasure
		}
	}
}

// transfer: after an unmeasured handshake the server writes 16 KiB records and the client
// reads each, until 64 MiB moved and both clocks reached the minimum; the client checks
// length and SHA-256 against the server's tally. gc is read before the first measured write
// and once the client has said stop.
func (l *local) transfer(spec sampleSpec, gc *gcWindow) (uint64, *clock, error) {
	side, clk := l.relay.side, &clock{}
	c, err := l.handshake(&meter{})
	if err == nil {
		err = l.check(c, false)
	}
	if err != nil {
		return 0, clk, err
	}
	payload, offset, inbox, seen := transferPayload(), 0, make([]byte, transferWriteSize), newTally()
	started, writes, peerReached := time.Now(), uint64(0), false
	for {
		proposal := nextMeasure
		switch {
		case spec.warming(started):
			proposal = nextWarmup
		case spec.done(writes, transferMinWrites, spec.reached(clk) && peerReached):
			proposal = nextStop
		}
		step, err := l.follow(proposal)
		if err != nil {
			return 0, clk, err
		}
		if step == nextStop {
			if gc.began {
				gc.end()
			}
			break
		}
		m := &meter{}
		if step == nextMeasure {
			m.clocks[side] = clk
			if !gc.began {
				gc.begin()
			}
		}
		if side == Server {
			data := payload[offset : offset+transferWriteSize]
			offset = (offset + transferWriteSize) % len(payload)
			seen.add(data)
			m.call(Server, func() { err = c.send(data) })
			if err != nil {
				return 0, clk, failed(Server, "write", err)
			}
			flight := message{tag: tagFlight, bytes: l.link.takeWrittenBy(Server), done: spec.reached(clk)}
			if err := l.relay.send(flight); err != nil {
				return 0, clk, err
			}
		} else {
			msg, err := l.relay.recv()
			if err != nil {
				return 0, clk, err
			}
			if msg.tag != tagFlight {
				return 0, clk, unexpected("a flight of records")
			}
			peerReached = msg.done
			l.link.deliverTo(Client, msg.bytes)
			var n int
			m.call(Client, func() { n, err = c.receiveAll(inbox) })
			if err != nil {
				return 0, clk, failed(Client, "read", err)
			}
			seen.add(inbox[:n])
		}
		if step == nextMeasure {
			writes++
		}
	}
	if side == Server {
		return writes, clk, l.relay.send(message{tag: tagTally, count: seen.bytes, digest: [32]byte(seen.sum())})
	}
	// Whatever the library still holds comes out now, outside the clock.
	for {
		n, err := c.receiveAll(inbox)
		if err != nil {
			return 0, clk, failed(Client, "read", err)
		}
		if n == 0 {
			break
		}
		seen.add(inbox[:n])
	}
	msg, err := l.relay.recv()
	if err != nil {
		return 0, clk, err
	}
	if msg.tag != tagTally {
		return 0, clk, unexpected("the sender's tally")
	}
	return writes, clk, checkTally(msg.count, msg.digest[:], seen.bytes, seen.sum())
}

// handshake makes one connection on the empty link and takes it through its handshake in
// turns with the peer's.
func (l *local) handshake(m *meter) (*conn, error) {
	side := l.relay.side
	l.link.clear()
	c := l.cfg.open(l.link.end(side))
	m.call(side, c.create)
	return c, completeHandshakes(&splitTurns{relay: l.relay, conn: c, link: l.link, meter: m})
}

func (l *local) check(c *conn, resumed bool) error {
	n, err := c.negotiated()
	if err != nil {
		return failed(c.side, "negotiated parameters", err)
	}
	return l.gates.check(c.side, l.scenario, n, resumed)
}

func (l *local) checkedHandshake(m *meter, resumed bool) error {
	c, err := l.handshake(m)
	if err != nil {
		return err
	}
	return l.check(c, resumed)
}

// follow makes the client's proposal what both do next: the client sends it, the server
// receives it (its own proposal is ignored).
func (l *local) follow(proposed next) (next, error) {
	if l.relay.side == Client {
		return proposed, l.relay.send(message{tag: tagNext, next: proposed})
	}
	m, err := l.relay.recv()
	if err != nil {
		return 0, err
	}
	if m.tag != tagNext {
		return 0, unexpected("what to do next")
	}
	return m.next, nil
}

// bothReached, after a measured handshake: the server tells whether its clock reached the
// minimum; only the client, which decides, learns both.
func (l *local) bothReached(mine bool) (bool, error) {
	if l.relay.side == Server {
		return false, l.relay.send(message{tag: tagReached, reached: mine})
	}
	m, err := l.relay.recv()
	if err != nil {
		return false, err
	}
	if m.tag != tagReached {
		return false, unexpected("the server's clock")
	}
	return mine && m.reached, nil
}

// splitTurns is this side's connection with the peer process's: a turn of this side steps
// its connection and sends the peer its flight (with whether it has completed and how many
// received bytes it left unread); the peer's turn is its answer in kind.
type splitTurns struct {
	relay      *relay
	conn       *conn
	link       *link
	p          progress
	meter      *meter
	sent       int // bytes this side sent in its last turn, which the peer has not read yet
	peerUnread int // bytes the peer left unread after its last turn
}

func (t *splitTurns) turn(side Side) (bool, error) {
	own := t.relay.side
	if side == own {
		done, err := turnOne(t.conn, side, t.link, &t.p, t.meter)
		if err != nil {
			return false, err
		}
		flight := t.link.takeWrittenBy(side)
		t.sent = len(flight)
		m := message{tag: tagFlights, flights: [][]byte{flight}, done: done, unread: uint32(t.link.unreadBy(side))}
		return done, t.relay.send(m)
	}
	m, err := t.relay.recv()
	if err != nil {
		return false, err
	}
	if m.tag != tagFlights || len(m.flights) != 1 {
		return false, unexpected("one flight per connection")
	}
	t.link.deliverTo(own, m.flights[0])
	t.sent, t.peerUnread = 0, int(m.unread)
	return m.done, nil
}

func (t *splitTurns) unread() int { return t.link.unreadBy(t.relay.side) + t.sent + t.peerUnread }
