package main

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"testing"
	"time"
)

// rustLatency is a handshake latency histogram of 174 connections as the Rust harness wrote
// it (hdrhistogram 7.6's V2DeflateSerializer), from a `tlsbench load --output` report.
const rustLatency = "HISTFAAAANh4nDWPMUpDQRCG532zL0sIjxBSiDyDpTaCjViKBOwtPYA38QZir3gEEXKBnONVgaRLkz7/" +
	"ziY7u//M7P7z78zVx+fcrLm1uvzktjov96tve9rXm80FP84bU9mCO5nRknVMOJNfMJbNUDjFhc4cQdnjUXEefFdFJORkkYmsiFEmnV+" +
	"Fhi7bpAqY4IVhyVPqpBLPJxWLTgSTVAVqZiGcQzBXSnTVKyv99TFKSMSPpf0eOh655JUHbjTLM0uGlgNc89cwwH8j3pfzzi/sEGdwlXQKlqzhCPxZFik="

func TestAHistogramReadsBackWithItsPercentiles(t *testing.T) {
	h := newLatency()
	for us := 1; us <= 100; us++ {
		h.record(time.Duration(us*10) * time.Microsecond)
	}
	h.record(2 * time.Second)
	h.record(0) // clamped to the lowest value, 1 µs
	var text string
	line, _ := json.Marshal(h)
	if err := json.Unmarshal(line, &text); err != nil {
		t.Fatalf("a histogram is a JSON string: %s: %v", line, err)
	}
	raw, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		t.Fatal(err)
	}
	back, err := decodeHistogram(raw)
	if err != nil {
		t.Fatal(err)
	}
	if back.total != 102 {
		t.Fatalf("%d values read back, 102 recorded", back.total)
	}
	for _, p := range []float64{0, 1, 50, 90, 99, 100} {
		if got, want := back.percentile(p), h.percentile(p); got != want {
			t.Errorf("p%v: %d ns read back, %d recorded", p, got, want)
		}
	}
	if p50 := back.percentile(50) / 1000; p50 < 500 || p50 > 510 {
		t.Errorf("the median of 10..1000 µs and one 2 s: %d µs", p50)
	}
	if slowest := back.percentile(100); math.Abs(float64(slowest)/2e9-1) > 0.001 {
		t.Errorf("the slowest is kept within 0.1%%: %d ns", slowest)
	}
	// 1 µs is in the first bucket's bin from 512 ns: the unit is 2^9 ns (floor(log2(1000))).
	if low := back.percentile(0); low != 512 {
		t.Errorf("the lowest is 1 µs, whose bin starts at 512 ns: %d ns", low)
	}
}

func TestTheEncodingIsHdrHistogramsV2WithDeflate(t *testing.T) {
	h := newLatency()
	// 1 µs to an hour at three digits: 2048 sub-buckets, 23 buckets, as hdrhistogram counts.
	if len(h.counts) != 24*1024 {
		t.Fatalf("%d counts, hdrhistogram has 24576 for these bounds", len(h.counts))
	}
	compressed := h.encodeCompressed()
	if got := binary.BigEndian.Uint32(compressed); got != 0x1c849314 {
		t.Fatalf("cookie %#x, V2 + deflate is 0x1c849314", got)
	}
	if n := binary.BigEndian.Uint32(compressed[4:]); int(n) != len(compressed)-8 {
		t.Errorf("the zlib stream's length says %d, it is %d", n, len(compressed)-8)
	}
	z, err := zlib.NewReader(bytes.NewReader(compressed[8:]))
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := io.ReadAll(z)
	header := make([]byte, 40)
	binary.BigEndian.PutUint32(header[0:], 0x1c849313)
	binary.BigEndian.PutUint32(header[4:], 1) // the payload: one zero count
	binary.BigEndian.PutUint32(header[12:], 3)
	binary.BigEndian.PutUint64(header[16:], 1_000)
	binary.BigEndian.PutUint64(header[24:], 3_600_000_000_000)
	binary.BigEndian.PutUint64(header[32:], math.Float64bits(1))
	if want := append(header, 0); !bytes.Equal(v2, want) {
		t.Errorf("an empty histogram encodes as\n%x, hdrhistogram writes\n%x", v2, want)
	}
	// Varints: 7 bits a byte, the ninth byte whole.
	for _, c := range []struct {
		v    uint64
		want []byte
	}{{0, []byte{0}}, {127, []byte{127}}, {128, []byte{0x80, 1}}, {math.MaxUint64, bytes.Repeat([]byte{0xff}, 9)}} {
		if got := appendVarint(nil, c.v); !bytes.Equal(got, c.want) {
			t.Errorf("varint %d: %x, want %x", c.v, got, c.want)
		}
	}
}

func TestAHistogramTheRustHarnessWroteReadsAndEncodesByteForByteTheSame(t *testing.T) {
	raw, err := base64.StdEncoding.DecodeString(rustLatency)
	if err != nil {
		t.Fatal(err)
	}
	h, err := decodeHistogram(raw)
	if err != nil {
		t.Fatal(err)
	}
	if h.total != 174 {
		t.Fatalf("%d values, the report had 174 connections", h.total)
	}
	z, err := zlib.NewReader(bytes.NewReader(raw[8:]))
	if err != nil {
		t.Fatal(err)
	}
	rust, _ := io.ReadAll(z)
	if ours := h.encodeV2(); !bytes.Equal(ours, rust) {
		t.Errorf("re-encoded:\n%x\nthe Rust harness's:\n%x", ours, rust)
	}
}
