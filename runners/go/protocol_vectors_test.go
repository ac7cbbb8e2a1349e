package main

// The runner protocol as data (docs/runner-protocol.md, "The protocol as data"): the test
// vectors in protocol/, generated from the Rust harness, and the JSON Schema of every reply.
// This runner must parse every scenario name to the same fields, refuse every invalid one with
// the same words, frame relay messages byte for byte the same, encode latency histograms the
// same, and reply only what the schema allows.

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// protocolDir is the repository's protocol/, from this package's directory.
const protocolDir = "../../protocol"

func readVectors(t *testing.T, file string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(protocolDir, file))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

func TestEveryScenarioNameParsesToTheHarnessFields(t *testing.T) {
	var table struct {
		Columns   []string
		Scenarios [][]json.RawMessage
	}
	readVectors(t, "scenarios.json", &table)
	want := []string{
		"name", "kind", "version", "group", "key", "suite", "client_auth", "ems", "client_groups", "server_groups",
	}
	if !slices.Equal(table.Columns, want) {
		t.Fatalf("columns %v, this test reads %v", table.Columns, want)
	}
	if len(table.Scenarios) < 2000 {
		t.Fatalf("only %d scenarios", len(table.Scenarios))
	}
	for _, row := range table.Scenarios {
		var (
			name, kind, version, key, auth string
			group, suite                   *string
			ems                            bool
			clientGroups, serverGroups     []Group
		)
		for i, field := range []any{&name, &kind, &version, &group, &key, &suite, &auth, &ems, &clientGroups, &serverGroups} {
			if err := json.Unmarshal(row[i], field); err != nil {
				t.Fatalf("%s: %v", row, err)
			}
		}
		expected := Scenario{
			Kind: Kind(kind), Version: Version(version), Pinned: group != nil, Key: KeyType(key),
			ClientAuth: ClientAuth(auth), EMS: ems,
		}
		if group != nil && suite != nil {
			expected.Group, expected.Suite = Group(*group), Suite(*suite)
		}
		got, err := ParseScenario(name)
		if err != nil || got != expected {
			t.Errorf("%s: parsed as %+v, %v; the harness: %+v", name, got, err, expected)
			continue
		}
		if got.Name() != name {
			t.Errorf("%s: named back as %s", name, got.Name())
		}
		if !slices.Equal(got.groups(Client), clientGroups) || !slices.Equal(got.groups(Server), serverGroups) {
			t.Errorf("%s: groups %v (client), %v (server); the harness: %v, %v",
				name, got.groups(Client), got.groups(Server), clientGroups, serverGroups)
		}
	}
}

func TestEveryInvalidScenarioNameIsRefusedWithTheHarnessWords(t *testing.T) {
	var vectors []struct{ Name, Error string }
	readVectors(t, "invalid-scenarios.json", &vectors)
	for _, v := range vectors {
		if _, err := ParseScenario(v.Name); err == nil || err.Error() != v.Error {
			t.Errorf("%q: %v; the harness: %s", v.Name, err, v.Error)
		}
	}
}

func TestEachMeasureAppliesToTheHarnessKinds(t *testing.T) {
	var vectors []struct {
		Measure, Scenario string
		Unsupported       *string
	}
	readVectors(t, "measures.json", &vectors)
	for _, v := range vectors {
		s, err := ParseScenario(v.Scenario)
		if err != nil {
			t.Fatal(err)
		}
		err = checkMeasure(Measure(v.Measure), s)
		switch {
		case v.Unsupported == nil && err != nil:
			t.Errorf("%s on %s: %v; the harness takes it", v.Measure, v.Scenario, err)
		case v.Unsupported != nil && (err == nil || err.Error() != *v.Unsupported || !isUnsupported(err)):
			t.Errorf("%s on %s: %v; the harness: unsupported, %s", v.Measure, v.Scenario, err, *v.Unsupported)
		}
	}
}

func isUnsupported(err error) bool {
	_, ok := err.(errUnsupported)
	return ok
}

// frameVector is one line of frames.json: a frame (length first), and the message it carries or
// the error a reader gives.
type frameVector struct {
	Hex     string
	Message *frameMessage
	Error   *string
	// Cause is whose failure the error is, as a failed reply's "cause" says it: "peer" or "own".
	Cause      string
	DecodeOnly bool `json:"decode_only"`
}

type frameMessage struct {
	Type, Next, Reason, Sha256 string
	// Bytes is a flight's bytes in hex, or a tally's count.
	Bytes         json.RawMessage
	Done, Reached bool
	Unread        uint32
	Flights       []string
}

// message is the vector's message in this runner's terms.
func (m frameMessage) message(t *testing.T) message {
	t.Helper()
	unhex := func(s string) []byte {
		b, err := hex.DecodeString(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tags := map[string]byte{
		"flight": tagFlight, "next": tagNext, "reached": tagReached, "tally": tagTally, "abort": tagAbort,
		"flights": tagFlights,
	}
	nexts := map[string]next{"seed": nextSeed, "warm-up": nextWarmup, "measure": nextMeasure, "stop": nextStop}
	tag, ok := tags[m.Type]
	if !ok {
		t.Fatalf("a message of type %q", m.Type)
	}
	out := message{tag: tag, done: m.Done, unread: m.Unread, reached: m.Reached, reason: m.Reason}
	switch tag {
	case tagFlight:
		var text string
		if err := json.Unmarshal(m.Bytes, &text); err != nil {
			t.Fatal(err)
		}
		out.bytes = unhex(text)
	case tagNext:
		out.next = nexts[m.Next]
	case tagTally:
		if err := json.Unmarshal(m.Bytes, &out.count); err != nil {
			t.Fatal(err)
		}
		copy(out.digest[:], unhex(m.Sha256))
	case tagFlights:
		out.flights = [][]byte{}
		for _, f := range m.Flights {
			out.flights = append(out.flights, unhex(f))
		}
	}
	return out
}

func TestRelayFramesAreTheHarnessBytes(t *testing.T) {
	var raw []json.RawMessage
	readVectors(t, "frames.json", &raw)
	for _, line := range raw {
		var v frameVector
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatal(err)
		}
		frame, err := hex.DecodeString(v.Hex)
		if err != nil {
			t.Fatal(err)
		}
		got, recvErr := (&relay{peer: struct {
			io.Reader
			io.Writer
		}{bytes.NewReader(frame), io.Discard}}).recv()
		if v.Message != nil && !v.DecodeOnly {
			var sent bytes.Buffer
			if err := (&relay{peer: &sent}).send(v.Message.message(t)); err != nil {
				t.Fatal(err)
			}
			if hex.EncodeToString(sent.Bytes()) != v.Hex {
				t.Errorf("%s: framed as %x", line, sent.Bytes())
			}
		}
		switch {
		case v.Error != nil:
			if recvErr == nil || recvErr.Error() != *v.Error {
				t.Errorf("%s: read as %+v, %v", line, got, recvErr)
			} else if cause := replyOf(nil, recvErr).Cause; cause != map[string]string{"peer": "peer"}[v.Cause] {
				t.Errorf("%s: a reply with cause %q", line, cause)
			}
		case recvErr != nil:
			t.Errorf("%s: %v", line, recvErr)
		default:
			want := v.Message.message(t)
			if got.tag == tagFlight && len(got.bytes) == 0 {
				got.bytes = []byte{}
			}
			if fmt.Sprintf("%x", got.flights) != fmt.Sprintf("%x", want.flights) {
				t.Errorf("%s: flights %x", line, got.flights)
			}
			got.flights, want.flights = nil, nil
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: read as %+v, want %+v", line, got, want)
			}
		}
	}
}

func TestLatencyHistogramsEncodeAsTheHarnessAndReadBack(t *testing.T) {
	var vectors []struct {
		ValuesNs            []uint64 `json:"values_ns"`
		Count               uint64
		P50Ns, P90Ns, P99Ns *uint64
		MaxNs               *uint64 `json:"max_ns"`
		V2Hex               string  `json:"v2_hex"`
		Base64              string
	}
	readVectors(t, "histograms.json", &vectors)
	for _, v := range vectors {
		h := newLatency()
		for _, ns := range v.ValuesNs {
			h.record(time.Duration(min(ns, math.MaxInt64)))
		}
		if got := hex.EncodeToString(h.encodeV2()); got != v.V2Hex {
			t.Errorf("%v: V2 encoding\n%s, the harness's\n%s", v.ValuesNs, got, v.V2Hex)
		}
		blob, err := base64.StdEncoding.DecodeString(v.Base64)
		if err != nil {
			t.Fatal(err)
		}
		back, err := decodeHistogram(blob)
		if err != nil {
			t.Fatalf("%v: %v", v.ValuesNs, err)
		}
		if back.total != v.Count {
			t.Errorf("%v: %d values read back, the harness recorded %d", v.ValuesNs, back.total, v.Count)
		}
		for p, want := range map[float64]*uint64{50: v.P50Ns, 90: v.P90Ns, 99: v.P99Ns, 100: v.MaxNs} {
			if want != nil && back.percentile(p) != *want {
				t.Errorf("%v: p%v %d ns, the harness %d", v.ValuesNs, p, back.percentile(p), *want)
			}
		}
	}
}

// schema is protocol/replies.schema.json.
func schema(t *testing.T) map[string]any {
	t.Helper()
	var s map[string]any
	readVectors(t, "replies.schema.json", &s)
	return s
}

func definition(name string) map[string]any { return map[string]any{"$ref": "#/$defs/" + name} }

func TestTheSchemaTellsTheHarnessRepliesFromBrokenOnes(t *testing.T) {
	root := schema(t)
	var examples []struct {
		Schema, Why string
		Valid       bool
		Reply       any
	}
	readVectors(t, "replies.json", &examples)
	for _, e := range examples {
		err := validate(root, definition(e.Schema), e.Reply, "")
		if e.Valid && err != nil {
			t.Errorf("the harness's %s: %v", e.Schema, err)
		}
		if !e.Valid && err == nil {
			t.Errorf("a %s with %s passes", e.Schema, e.Why)
		}
	}
	err := validate(root, map[string]any{"pattern": "^a"}, "a", "")
	if err == nil || !strings.Contains(err.Error(), "unsupported keyword") {
		t.Errorf("an unknown keyword: %v", err)
	}
}

// A side whose peer stopped replies as the harness does: failed, with the peer's reason, and
// "cause": "peer".
func TestAFailureThatEchoesThePeerIsTheHarnesssReply(t *testing.T) {
	var examples []struct {
		Schema string
		Valid  bool
		Reply  any
	}
	readVectors(t, "replies.json", &examples)
	var want map[string]any
	for _, e := range examples {
		if reply, ok := e.Reply.(map[string]any); ok && e.Schema == "sample_reply" && e.Valid && reply["cause"] == "peer" {
			want = reply
		}
	}
	if want == nil {
		t.Fatal("replies.json has no failed reply with the peer's cause")
	}
	a, b := socketPair(t)
	near, far := &relay{peer: a, side: Server}, &relay{peer: b, side: Client}
	reason := strings.TrimPrefix(want["reason"].(string), "the peer stopped: ")
	if err := near.send(message{tag: tagAbort, reason: reason}); err != nil {
		t.Fatal(err)
	}
	_, err := far.recv()
	line, _ := json.Marshal(replyOf(nil, err))
	var got map[string]any
	json.Unmarshal(line, &got)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s, the harness's %v", line, want)
	}
}

// This runner's own replies, from its commands, match the schema.
func TestThisRunnersRepliesMatchTheSchema(t *testing.T) {
	root := schema(t)
	dir := testDataDir(t, ECDSAP256)
	full := "handshake-full_1.3_x25519_ecdsa-p256_aes-128-gcm"
	timed := []string{"--min-time-ms", "2", "--warmup-ms", "1", "--data-dir", dir}
	transfer := "transfer_1.3_x25519_ecdsa-p256_aes-128-gcm"
	command := func(args ...string) any { return run(args, io.Discard, false) }
	client, server := netPair(t, full, Page{}, &Page{}, 1, 2)
	replies := []struct {
		def   string
		reply any
	}{
		{"list_reply", run([]string{"list"}, io.Discard, false)},
		{"sample_reply", command(append([]string{"sample", "--client", "go", "--server", "go", "--scenario", full},
			timed...)...)},
		{"sample_reply", command(append([]string{"sample", "--client", "go", "--server", "go", "--scenario", transfer},
			timed...)...)},
		{"sample_reply", command("sample", "--measure", "io", "--client", "go", "--server", "go",
			"--scenario", "io-profile_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir)},
		{"sample_reply", command("sample", "--measure", "heap", "--client", "go", "--server", "go", "--scenario", full,
			"--data-dir", dir)},
		{"sample_reply", command("sample", "--client", "nope", "--server", "go", "--scenario", full)},
		{"sample_reply", command("sample", "--measure", "rss", "--client", "go", "--server", "go",
			"--scenario", "memory-100_1.3_x25519_ecdsa-p256_aes-128-gcm")},
		{"trace_reply", command("trace", "--client", "go", "--server", "go",
			"--scenario", "io-profile_1.2_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir)},
		{"trace_reply", command("trace", "--client", "go", "--server", "nope", "--scenario", full)},
		{"serving", serving{Listening: "127.0.0.1:4433", Stack: stackID, Library: library(), Workers: 1}},
		{"net_reply", netReplyOf(client, nil)},
		{"net_reply", netReplyOf(server, nil)},
		{"net_reply", command("load", "--stack", "go", "--scenario", transfer, "--connect", "127.0.0.1:1")},
		{"sample_reply", command(append([]string{"sample", "--client", "go", "--server", "go",
			"--scenario", "context-server_1.2_x25519_ecdsa-p256_aes-128-gcm_mtls"}, timed...)...)},
		{"sample_reply", command("sample", "--measure", "heap", "--client", "go", "--server", "go",
			"--scenario", "context-client_1.3_x25519_ecdsa-p256_aes-128-gcm", "--data-dir", dir)},
		{"cold_reply", command("cold", "--client", "go", "--server", "go", "--scenario", full, "--data-dir", dir,
			"--spawned-at-ns", "0")},
		{"cold_reply", command("cold", "--client", "go", "--server", "go", "--data-dir", dir,
			"--scenario", "handshake-resume-ticket_1.3_x25519_ecdsa-p256_aes-128-gcm")},
		{"cold_reply", command("cold", "--client", "go", "--server", "go", "--scenario", transfer)},
	}
	statuses := map[string]bool{}
	for _, r := range replies {
		line, err := json.Marshal(r.reply)
		if err != nil {
			t.Fatal(err)
		}
		var reply any
		json.Unmarshal(line, &reply)
		if err := validate(root, definition(r.def), reply, ""); err != nil {
			t.Errorf("%s: %v\n%s", r.def, err, line)
		}
		if m, ok := reply.(map[string]any); ok {
			statuses[fmt.Sprint(m["status"])] = true
		}
	}
	for _, status := range []string{"ok", "failed", "unsupported"} {
		if !statuses[status] {
			t.Errorf("no %s reply among those checked", status)
		}
	}
}

// validate checks value against schema (part of root) with JSON Schema's meaning of the keywords
// replies.schema.json uses; a keyword it does not know is an error, never ignored. Values are as
// encoding/json decodes them into any: numbers are float64.
func validate(root map[string]any, schema map[string]any, value any, at string) error {
	if at == "" {
		at = "/"
	}
	fail := func(format string, args ...any) error { return fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...)) }
	object, isObject := value.(map[string]any)
	number, isNumber := value.(float64)
	for keyword, arg := range schema {
		switch keyword {
		case "$schema", "$id", "title", "description", "$comment", "$defs":
		case "$ref":
			name, _ := strings.CutPrefix(arg.(string), "#/$defs/")
			target, ok := root["$defs"].(map[string]any)[name].(map[string]any)
			if !ok {
				return fail("no $defs/%s", name)
			}
			if err := validate(root, target, value, at); err != nil {
				return err
			}
		case "type":
			types, ok := arg.([]any)
			if !ok {
				types = []any{arg}
			}
			matched := false
			for _, t := range types {
				switch t {
				case "object":
					matched = matched || isObject
				case "array":
					_, is := value.([]any)
					matched = matched || is
				case "string":
					_, is := value.(string)
					matched = matched || is
				case "boolean":
					_, is := value.(bool)
					matched = matched || is
				case "null":
					matched = matched || value == nil
				case "number":
					matched = matched || isNumber
				case "integer":
					matched = matched || isNumber && number == math.Trunc(number)
				}
			}
			if !matched {
				return fail("%v is not of type %v", value, arg)
			}
		case "enum":
			if !slices.ContainsFunc(arg.([]any), func(v any) bool { return reflect.DeepEqual(v, value) }) {
				return fail("%v is not one of %v", value, arg)
			}
		case "const":
			if !reflect.DeepEqual(arg, value) {
				return fail("%v is not %v", value, arg)
			}
		case "minimum":
			if isNumber && number < arg.(float64) {
				return fail("%v is below %v", value, arg)
			}
		case "maximum":
			if isNumber && number > arg.(float64) {
				return fail("%v is above %v", value, arg)
			}
		case "required":
			for _, name := range arg.([]any) {
				if _, ok := object[name.(string)]; isObject && !ok {
					return fail("no `%s`", name)
				}
			}
		case "properties":
			for name, field := range object {
				if property, ok := arg.(map[string]any)[name].(map[string]any); ok {
					if err := validate(root, property, field, strings.TrimSuffix(at, "/")+"/"+name); err != nil {
						return err
					}
				}
			}
		case "additionalProperties":
			properties, _ := schema["properties"].(map[string]any)
			for name, field := range object {
				if _, known := properties[name]; known {
					continue
				}
				switch extra := arg.(type) {
				case bool:
					if !extra {
						return fail("unknown field `%s`", name)
					}
				case map[string]any:
					if err := validate(root, extra, field, strings.TrimSuffix(at, "/")+"/"+name); err != nil {
						return err
					}
				}
			}
		case "items":
			items, _ := value.([]any)
			for i, item := range items {
				itemAt := fmt.Sprintf("%s/%d", strings.TrimSuffix(at, "/"), i)
				if err := validate(root, arg.(map[string]any), item, itemAt); err != nil {
					return err
				}
			}
		case "oneOf", "anyOf":
			var errs []string
			branches := arg.([]any)
			for _, branch := range branches {
				if err := validate(root, branch.(map[string]any), value, at); err != nil {
					errs = append(errs, err.Error())
				}
			}
			passed := len(branches) - len(errs)
			if passed == 0 || keyword == "oneOf" && passed > 1 {
				return fail("%d of the %s branches match (%s)", passed, keyword, strings.Join(errs, "; "))
			}
		default:
			return fmt.Errorf("unsupported keyword `%s`", keyword)
		}
	}
	return nil
}
