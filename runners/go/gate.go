package main

// Correctness gates (crates/harness/src/gate.rs): after each handshake, each side's view is
// checked against the scenario; a gate that fails fails the cell, never a number.

// gates keeps what the last handshake each side passed negotiated: the sample reports it.
type gates struct {
	seen [2]*negotiated
}

func (g *gates) check(side Side, s Scenario, got negotiated, expectResumed bool) error {
	if err := checkHandshake(side, s, got, expectResumed); err != nil {
		return err
	}
	g.seen[side] = &got
	return nil
}

// list is each side's last passed handshake, client first.
func (g *gates) list() []SideNegotiate {
	var list []SideNegotiate
	for _, side := range []Side{Client, Server} {
		if n := g.seen[side]; n != nil {
			list = append(list, SideNegotiate{Side: side, Negotiated: n.String()})
		}
	}
	return list
}

// checkHandshake checks one side's view of a completed handshake against the scenario.
func checkHandshake(side Side, s Scenario, got negotiated, expectResumed bool) error {
	mismatch := func(what string, got, want any) error {
		return gateFailed("%s negotiated %s %v, the scenario asks for %v", side, what, got, want)
	}
	if got.version != s.Version {
		return mismatch("TLS", got.version, s.Version)
	}
	// With the libraries' defaults, the suite and group are what they chose: reported only.
	if s.Pinned {
		if got.suite != s.Suite {
			return mismatch("cipher suite", got.suite, s.Suite)
		}
		if got.group != "" && got.group != s.Group {
			return mismatch("group", got.group, s.Group)
		}
	}
	switch {
	case got.resumed && !expectResumed:
		return gateFailed("%s resumed a session where a full handshake was asked", side)
	case !got.resumed && expectResumed:
		return gateFailed("%s did a full handshake where resumption was asked", side)
	}
	if s.Version == TLS12 && got.ems != nil && *got.ems != s.EMS {
		onOff := map[bool]string{true: "on", false: "off"}
		return mismatch("extended master secret", onOff[*got.ems], onOff[s.EMS])
	}
	if side == Server {
		required := s.ClientAuth == AuthRequired
		switch v := got.clientCertVerified; {
		case v == nil:
			return gateFailed("server does not report whether it verified a client certificate")
		case !*v && required:
			return gateFailed("server did not verify a client certificate, the scenario requires one")
		case *v && !required:
			return gateFailed("server verified a client certificate, the scenario's client has none")
		}
	}
	return nil
}
