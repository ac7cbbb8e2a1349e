package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// record frames body as a TLS 1.2 record of contentType.
func record(contentType byte, body []byte) []byte {
	return append([]byte{contentType, 3, 3, byte(len(body) >> 8), byte(len(body))}, body...)
}

// handshakeMessage is a message of type typ with a body of n zeros.
func handshakeMessage(typ byte, n int) []byte {
	return append([]byte{typ, byte(n >> 16), byte(n >> 8), byte(n)}, make([]byte, n)...)
}

func TestBytesCrossInOrderAndAnEmptyPipeWouldBlock(t *testing.T) {
	l := newLink(false)
	client, server := l.end(Client), l.end(Server)
	client.Write([]byte("hello "))
	client.Write([]byte("server"))
	buf := make([]byte, 5)
	if n, err := server.Read(buf); n != 5 || err != nil || string(buf) != "hello" {
		t.Errorf("%d %v %q", n, err, buf)
	}
	rest := make([]byte, 64)
	if n, _ := server.Read(rest); string(rest[:n]) != " server" {
		t.Errorf("%q", rest[:n])
	}
	if _, err := server.Read(rest); err != errWouldBlock {
		t.Errorf("empty pipe: %v", err)
	}
	// Relayed: what one link's client wrote, delivered to another link's server.
	far := newLink(false)
	client.Write([]byte("flight"))
	far.deliverTo(Server, l.takeWrittenBy(Client))
	if l.inFlight() != 0 || far.unreadBy(Server) != 6 {
		t.Errorf("in flight %d, unread %d", l.inFlight(), far.unreadBy(Server))
	}
	far.clear()
	if far.inFlight() != 0 {
		t.Error("clear left bytes")
	}
}

func TestTheLogParsesRecordsAndHandshakeMessagesAcrossWrites(t *testing.T) {
	l := newLink(true)
	server, client := l.end(Server), l.end(Client)
	// Server hello and certificate in one record; a certificate too long for one record goes
	// on in the next, which also holds server_hello_done (empty body).
	first := append(handshakeMessage(2, 10), handshakeMessage(11, 3000)...)
	second := append(append([]byte{}, first[1000:]...), handshakeMessage(14, 0)...)
	server.Write(record(recordHandshake, first[:1000]))
	// A header split across two writes.
	r2 := record(recordHandshake, second)
	server.Write(r2[:3])
	server.Write(r2[3:])
	// After change_cipher_spec, handshake records are encrypted: no messages are read.
	server.Write(append(record(recordChangeCipherSpec, []byte{1}), record(recordHandshake, make([]byte, 40))...))
	client.Read(make([]byte, 8))
	client.Write(record(recordAlert, []byte{1, 0}))
	events := l.log.take()
	var records []Record
	var flights []uint32
	for _, e := range events {
		if e.Event == "write" {
			records = append(records, e.Records...)
			flights = append(flights, *e.Flight)
		}
	}
	want := []Record{
		{ContentType: 22, Length: 1000, Messages: []int{2, 11}},
		{ContentType: 22, Length: len(second), Messages: []int{14}, Continued: true},
		{ContentType: 20, Length: 1},
		{ContentType: 22, Length: 40},
		{ContentType: 21, Length: 2},
	}
	if !reflect.DeepEqual(records, want) {
		t.Errorf("records %+v", records)
	}
	if !reflect.DeepEqual(flights, []uint32{1, 1, 1, 1, 2}) {
		t.Errorf("flights %v", flights)
	}
	tot := totals(events, Server)
	if tot.writeCalls != 4 || tot.recordsWritten != 4 || tot.readCalls != 0 {
		t.Errorf("server %+v", tot)
	}
	if tot := totals(events, Client); tot.readCalls != 1 || tot.emptyReads != 0 || tot.recordsWritten != 1 {
		t.Errorf("client %+v", tot)
	}
	// As the harness writes them: "got": null for a read that found nothing.
	empty := newLink(true)
	empty.end(Server).Read(make([]byte, 5))
	line, _ := json.Marshal(empty.log.take())
	if string(line) != `[{"event":"read","side":"server","want":5,"got":null}]` {
		t.Errorf("%s", line)
	}
}

func TestIoCountsOneConnectionOfEachKind(t *testing.T) {
	cases := []struct {
		name       string
		minRecords map[Side]float64
	}{
		{"io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", map[Side]float64{Client: 5, Server: 8}},
		{"io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls", map[Side]float64{Client: 6, Server: 6}},
		{"handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm", map[Side]float64{Client: 2, Server: 4}},
		{"handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm", map[Side]float64{Client: 2, Server: 2}},
	}
	for _, c := range cases {
		report, err := ioSample(testPair(t, c.name, true))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		values := map[Side]map[string]float64{Client: {}, Server: {}}
		for _, v := range report.Values {
			values[v.Side][v.Metric] = v.Value
		}
		for side, v := range values {
			if v["io_calls"] != v["read_calls"]+v["write_calls"] || v["records_written"] < c.minRecords[side] ||
				v["bytes_written"] < 5*v["records_written"] ||
				v["empty_read_calls"] > v["read_calls"] || len(v) != 6 {
				t.Errorf("%s %s: %v", c.name, side, v)
			}
		}
	}
	trace, err := ioTrace(testPair(t, "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", true))
	if err != nil {
		t.Fatal(err)
	}
	var phases []string
	for _, e := range trace.Events {
		if e.Event == "phase" {
			phases = append(phases, e.Name)
		}
	}
	if strings.Join(phases, ",") != "handshake,application data,close_notify" {
		t.Errorf("phases %v", phases)
	}
}
