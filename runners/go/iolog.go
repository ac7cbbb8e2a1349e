package main

// The IO log of the io measure and of `trace` (crates/harness/src/transport.rs, IoLog and
// RecordStream): every read and write call of both sides in order, and the TLS records each
// side writes, parsed from its byte stream across write calls, with the handshake messages
// that begin in plaintext handshake records.

import "encoding/json"

// IoEvent is one call or mark: {"event":"read"|"write"|"phase", ...}.
type IoEvent struct {
	Event   string   `json:"event"`
	Side    *Side    `json:"side,omitempty"`
	Want    *int     `json:"want,omitempty"`
	Got     *int     `json:"-"`
	Len     *int     `json:"len,omitempty"`
	Flight  *uint32  `json:"flight,omitempty"`
	Records []Record `json:"-"`
	Name    string   `json:"name,omitempty"`
}

// MarshalJSON writes "got": null for a read that found nothing, and a write's records even
// when there are none, as the harness does.
func (e IoEvent) MarshalJSON() ([]byte, error) {
	type plain IoEvent
	switch e.Event {
	case "read":
		return json.Marshal(struct {
			plain
			Got *int `json:"got"`
		}{plain(e), e.Got})
	case "write":
		records := e.Records
		if records == nil {
			records = []Record{}
		}
		return json.Marshal(struct {
			plain
			Records []Record `json:"records"`
		}{plain(e), records})
	}
	return json.Marshal(plain(e))
}

// Record is a TLS record from its header; Messages are the handshake message types that begin
// in a plaintext handshake record (nil for other records, encrypted ones included).
type Record struct {
	ContentType uint8 `json:"content_type"`
	Length      int   `json:"length"`
	Messages    []int `json:"messages"`
	Continued   bool  `json:"continued"`
}

const (
	recordChangeCipherSpec = 20
	recordAlert            = 21
	recordHandshake        = 22
	recordApplicationData  = 23
)

type ioLog struct {
	events     []IoEvent
	flight     uint32
	lastWriter Side
	anyWriter  bool
	newFlight  bool
	streams    [2]recordStream
}

func (l *ioLog) read(side Side, want, got int) {
	e := IoEvent{Event: "read", Side: &side, Want: &want}
	if got >= 0 {
		e.Got = &got
	}
	l.events = append(l.events, e)
}

// write logs one write call. A flight is what one side writes before its peer writes (or a
// phase begins); flights are numbered from 1 per connection.
func (l *ioLog) write(side Side, b []byte) {
	if l.newFlight || !l.anyWriter || l.lastWriter != side {
		l.flight++
		l.newFlight, l.anyWriter, l.lastWriter = false, true, side
	}
	n, flight := len(b), l.flight
	l.events = append(l.events, IoEvent{Event: "write", Side: &side, Len: &n, Flight: &flight})
	l.streams[side].parse(b, len(l.events)-1, l.events)
}

// phase marks the start of a phase of the connection; the next write starts a new flight.
func (l *ioLog) phase(name string) {
	l.events = append(l.events, IoEvent{Event: "phase", Name: name})
	l.newFlight = true
}

func (l *ioLog) restartStreams() {
	l.streams = [2]recordStream{}
	l.newFlight = true
}

// take returns what was logged and starts afresh, flights counted from 1 again.
func (l *ioLog) take() []IoEvent {
	events := l.events
	*l = ioLog{}
	return events
}

// recordStream parses one side's written bytes as TLS records, across write calls: a header
// may straddle two writes, and each record is filed under the write its header began in.
type recordStream struct {
	header      [5]byte
	headerLen   int
	headerEvent int
	bodyLeft    int
	// The record whose body is parsed for handshake messages: event and index, if any.
	current      bool
	curEvent     int
	curIndex     int
	encrypted    bool // this side sent change_cipher_spec or application data
	msgHeader    [4]byte
	msgHeaderLen int
	msgLeft      int
}

func (s *recordStream) parse(b []byte, event int, events []IoEvent) {
	for len(b) > 0 {
		if s.bodyLeft == 0 {
			if s.headerLen == 0 {
				s.headerEvent = event
			}
			n := copy(s.header[s.headerLen:], b)
			s.headerLen += n
			b = b[n:]
			if s.headerLen == 5 {
				s.headerLen = 0
				s.beginRecord(events)
			}
			continue
		}
		n := min(s.bodyLeft, len(b))
		if s.current {
			s.parseMessages(b[:n], &events[s.curEvent].Records[s.curIndex])
		}
		s.bodyLeft -= n
		b = b[n:]
	}
}

func (s *recordStream) beginRecord(events []IoEvent) {
	contentType, length := s.header[0], int(s.header[3])<<8|int(s.header[4])
	plaintextHandshake := contentType == recordHandshake && !s.encrypted
	if contentType == recordChangeCipherSpec || contentType == recordApplicationData {
		s.encrypted = true
	}
	record := Record{ContentType: contentType, Length: length}
	if plaintextHandshake {
		record.Messages = []int{}
	}
	e := &events[s.headerEvent]
	e.Records = append(e.Records, record)
	s.current, s.curEvent, s.curIndex = plaintextHandshake, s.headerEvent, len(e.Records)-1
	s.bodyLeft = length
}

// parseMessages follows the handshake message headers (type, 24-bit length) in a plaintext
// handshake record's body.
func (s *recordStream) parseMessages(body []byte, r *Record) {
	if len(r.Messages) == 0 && !r.Continued && (s.msgLeft > 0 || s.msgHeaderLen > 0) {
		r.Continued = true
	}
	for len(body) > 0 {
		if s.msgLeft > 0 {
			n := min(s.msgLeft, len(body))
			s.msgLeft -= n
			body = body[n:]
			continue
		}
		if s.msgHeaderLen == 0 {
			r.Messages = append(r.Messages, int(body[0]))
		}
		n := copy(s.msgHeader[s.msgHeaderLen:], body)
		s.msgHeaderLen += n
		body = body[n:]
		if s.msgHeaderLen == 4 {
			s.msgHeaderLen = 0
			s.msgLeft = int(s.msgHeader[1])<<16 | int(s.msgHeader[2])<<8 | int(s.msgHeader[3])
		}
	}
}

// ioTotals is one side's calls, records and bytes over a trace.
type ioTotals struct {
	readCalls, emptyReads, writeCalls, recordsWritten, bytesWritten uint64
}

func totals(events []IoEvent, side Side) ioTotals {
	var t ioTotals
	for _, e := range events {
		if e.Side == nil || *e.Side != side {
			continue
		}
		switch e.Event {
		case "read":
			t.readCalls++
			if e.Got == nil {
				t.emptyReads++
			}
		case "write":
			t.writeCalls++
			t.bytesWritten += uint64(*e.Len)
			t.recordsWritten += uint64(len(e.Records))
		}
	}
	return t
}

// ioMetrics are the io measure's counts of both sides (seconds 0: counts, not rates).
func ioMetrics(events []IoEvent) []MetricValue {
	var values []MetricValue
	for _, side := range []Side{Client, Server} {
		t := totals(events, side)
		for _, m := range []struct {
			name string
			n    uint64
		}{
			{"read_calls", t.readCalls},
			{"empty_read_calls", t.emptyReads},
			{"write_calls", t.writeCalls},
			{"io_calls", t.readCalls + t.writeCalls},
			{"records_written", t.recordsWritten},
			{"bytes_written", t.bytesWritten},
		} {
			values = append(values, MetricValue{Side: side, Metric: m.name, Value: float64(m.n)})
		}
	}
	return values
}
