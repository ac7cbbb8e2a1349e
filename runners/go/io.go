package main

// The io measure and `trace` (crates/harness/src/io.rs): every transport call of both sides
// in one connection, and the records each writes. For handshake kinds, one handshake after an
// unmeasured seed (resumed for the resumption kinds); for io-profile, one whole short
// connection: a full handshake, one byte each way, close_notify each way.

const (
	clientByte = 0x42
	serverByte = 0x24
	// maxReadAttempts: how often a side is asked to read before what it waits for is missing.
	maxReadAttempts = 4
)

// IoTrace is one connection's calls of both sides, in order, with the driver's phase marks.
type IoTrace struct {
	Scenario      string          `json:"scenario"`
	ClientStack   string          `json:"client_stack"`
	ServerStack   string          `json:"server_stack"`
	ClientLibrary string          `json:"client_library"`
	ServerLibrary string          `json:"server_library"`
	Negotiated    []SideNegotiate `json:"negotiated"`
	Events        []IoEvent       `json:"events"`
}

// ioTrace traces one measured connection of p's scenario (p's link logs every call).
func ioTrace(p *pair) (*IoTrace, error) {
	var events []IoEvent
	var err error
	if p.scenario.Kind == IoProfile {
		events, err = p.profile()
	} else {
		events, err = p.measuredHandshake()
	}
	if err != nil {
		return nil, err
	}
	negotiated := p.gates.list()
	if negotiated == nil {
		negotiated = []SideNegotiate{}
	}
	return &IoTrace{Scenario: p.scenario.Name(), ClientStack: stackID, ServerStack: stackID, ClientLibrary: library(),
		ServerLibrary: library(), Negotiated: negotiated, Events: events}, nil
}

// ioSample is the io measure's sample: one connection's counts per side.
func ioSample(p *pair) (*SampleReport, error) {
	trace, err := ioTrace(p)
	if err != nil {
		return nil, err
	}
	return &SampleReport{ClientLibrary: trace.ClientLibrary, ServerLibrary: trace.ServerLibrary, Iterations: 1,
		Values: ioMetrics(trace.Events), Negotiated: trace.Negotiated}, nil
}

// measuredHandshake: a seed handshake, then the measured one, checked; its events.
func (p *pair) measuredHandshake() ([]IoEvent, error) {
	if err := p.checkedHandshake(&meter{}, false); err != nil {
		return nil, err
	}
	p.link.log.take()
	p.link.log.phase("handshake")
	if err := p.checkedHandshake(&meter{}, p.scenario.Kind.isResumption()); err != nil {
		return nil, err
	}
	return p.link.log.take(), nil
}

// profile is the io-profile connection, checked at each step.
func (p *pair) profile() ([]IoEvent, error) {
	log := p.link.log
	log.phase("handshake")
	conns, err := p.handshake(&meter{})
	if err == nil {
		err = p.check(conns, false)
	}
	if err != nil {
		return nil, err
	}
	client, server := conns[Client], conns[Server]

	log.phase("application data")
	if err := client.send([]byte{clientByte}); err != nil {
		return nil, failed(Client, "write", err)
	}
	if err := p.expectByte(server, clientByte); err != nil {
		return nil, err
	}
	if err := server.send([]byte{serverByte}); err != nil {
		return nil, failed(Server, "write", err)
	}
	if err := p.expectByte(client, serverByte); err != nil {
		return nil, err
	}

	log.phase("close_notify")
	if err := client.close(); err != nil {
		return nil, failed(Client, "close", err)
	}
	if err := p.expectClose(server); err != nil {
		return nil, err
	}
	if err := server.close(); err != nil {
		return nil, failed(Server, "close", err)
	}
	if err := p.expectClose(client); err != nil {
		return nil, err
	}
	if n := p.link.inFlight(); n != 0 {
		return nil, gateFailed("both sides read the other's close_notify, and %d bytes stay unread", n)
	}
	return log.take(), nil
}

// expectByte reads, while the peer's bytes wait to be read, until its one byte arrives.
func (p *pair) expectByte(c *conn, want byte) error {
	var buf [16]byte
	for range maxReadAttempts {
		if p.link.unreadBy(c.side) == 0 {
			break
		}
		n, err := c.receive(buf[:])
		switch {
		case err != nil:
			return failed(c.side, "read", err)
		case n == 0:
			continue
		case n == 1 && buf[0] == want:
			return nil
		case n == 1:
			return gateFailed("%s received byte %#04x, the peer sent %#04x", c.side, buf[0], want)
		default:
			return gateFailed("%s received %d bytes, the peer sent one", c.side, n)
		}
	}
	return gateFailed("%s did not receive the peer's byte in %d reads", c.side, maxReadAttempts)
}

// expectClose reads, while the peer's bytes wait to be read, until its close_notify arrives.
func (p *pair) expectClose(c *conn) error {
	for range maxReadAttempts {
		if p.link.unreadBy(c.side) == 0 {
			break
		}
		closed, err := c.peerClosed()
		if err != nil {
			return failed(c.side, "read close_notify", err)
		}
		if closed {
			return nil
		}
	}
	return gateFailed("%s did not receive the peer's close_notify in %d reads", c.side, maxReadAttempts)
}
