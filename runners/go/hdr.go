package main

// Latencies in an HdrHistogram (crates/harness/src/net/latency.rs): nanoseconds, 1 µs to an
// hour, three significant digits. In JSON a histogram is HdrHistogram's V2 encoding compressed
// with zlib (the "V2 + deflate" cookie), in base64: what the Rust side's hdrhistogram crate
// writes and its Deserializer reads. The counts array's layout is that crate's (and the Java
// original's): bucket 0 holds sub_bucket_count values at the unit's resolution, each further
// bucket the upper half of its sub-buckets at twice the previous resolution.

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"time"
)

const (
	latencyLowestNs  = 1_000
	latencyHighestNs = 3_600_000_000_000
	latencyDigits    = 3

	hdrV2Cookie           = 0x1c849303 | 0x10
	hdrV2CompressedCookie = 0x1c849304 | 0x10
	hdrV2HeaderSize       = 40
)

type histogram struct {
	low, high        uint64
	digits           uint8
	unitMagnitude    uint8
	subBucketHalfMag uint8
	subBucketCount   uint32
	subBucketHalf    uint32
	subBucketMask    uint64
	leadingZeroBase  uint8
	counts           []uint64
	// total is the count of values recorded; maxIndex the highest index with a count.
	total, maxIndex uint64
}

// newHistogram mirrors hdrhistogram's Histogram::new_with_bounds.
func newHistogram(low, high uint64, digits uint8) *histogram {
	largest := 2 * math.Pow10(int(digits))
	h := &histogram{low: low, high: high, digits: digits}
	h.unitMagnitude = uint8(math.Floor(math.Log2(float64(low))))
	countMag := uint8(math.Ceil(math.Log2(largest)))
	h.subBucketHalfMag = countMag - 1
	h.subBucketCount = 1 << countMag
	h.subBucketHalf = h.subBucketCount / 2
	h.subBucketMask = uint64(h.subBucketCount-1) << h.unitMagnitude
	h.leadingZeroBase = 64 - h.unitMagnitude - countMag
	// Buckets to cover high, plus one for bucket 0's lower half.
	buckets, untrackable := uint32(1), uint64(h.subBucketCount)<<h.unitMagnitude
	for untrackable <= high {
		if untrackable > math.MaxUint64/2 {
			buckets++
			break
		}
		untrackable <<= 1
		buckets++
	}
	h.counts = make([]uint64, (buckets+1)*h.subBucketHalf)
	return h
}

func newLatency() *histogram { return newHistogram(latencyLowestNs, latencyHighestNs, latencyDigits) }

func (h *histogram) bucketFor(v uint64) uint8 {
	return h.leadingZeroBase - uint8(bits.LeadingZeros64(v|h.subBucketMask))
}

func (h *histogram) indexFor(v uint64) int {
	bucket := h.bucketFor(v)
	sub := uint32(v >> (bucket + h.unitMagnitude))
	return int((uint32(bucket)+1)<<h.subBucketHalfMag) + int(sub) - int(h.subBucketHalf)
}

// valueFor is the lowest value counted at index.
func (h *histogram) valueFor(index int) uint64 {
	bucket := index>>h.subBucketHalfMag - 1
	sub := uint32(index)&(h.subBucketHalf-1) + h.subBucketHalf
	if bucket < 0 {
		sub -= h.subBucketHalf
		bucket = 0
	}
	return uint64(sub) << (uint8(bucket) + h.unitMagnitude)
}

// highestEquivalent is the highest value counted with v.
func (h *histogram) highestEquivalent(v uint64) uint64 {
	bucket := h.bucketFor(v)
	lowest := uint64(uint32(v>>(bucket+h.unitMagnitude))) << (bucket + h.unitMagnitude)
	return lowest + 1<<(h.unitMagnitude+bucket) - 1
}

// record adds one latency, clamped into the histogram's range as the Rust side clamps it.
func (h *histogram) record(d time.Duration) {
	ns := min(max(uint64(max(d, 0)), h.low), h.high)
	i := h.indexFor(ns)
	h.counts[i]++
	h.total++
	h.maxIndex = max(h.maxIndex, uint64(i))
}

func (h *histogram) add(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.total += o.total
	h.maxIndex = max(h.maxIndex, o.maxIndex)
}

// percentile is the value at p (0 to 100) as hdrhistogram's value_at_percentile gives it; 0
// when empty.
func (h *histogram) percentile(p float64) uint64 {
	q := min(p/100, 1)
	target := max(uint64(math.Ceil(q*float64(h.total))), 1)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= target {
			if q == 0 {
				return h.valueFor(i)
			}
			return h.highestEquivalent(h.valueFor(i))
		}
	}
	return 0
}

// encodeV2 is the uncompressed V2 encoding: header, then the counts up to the highest recorded
// index, each a zig-zag LEB128 varint (9 bytes at most), a run of two or more zeros as its
// negated length.
func (h *histogram) encodeV2() []byte {
	buf := make([]byte, hdrV2HeaderSize, hdrV2HeaderSize+16)
	binary.BigEndian.PutUint32(buf[0:], hdrV2Cookie)
	// buf[4:8] is the payload's length, filled in below; [8:12] the normalizing offset, 0.
	binary.BigEndian.PutUint32(buf[12:], uint32(h.digits))
	binary.BigEndian.PutUint64(buf[16:], h.low)
	binary.BigEndian.PutUint64(buf[24:], h.high)
	binary.BigEndian.PutUint64(buf[32:], math.Float64bits(1.0)) // integer to double ratio
	limit := int(h.maxIndex)
	for i := 0; i <= limit; {
		count := int64(h.counts[i])
		i++
		if count == 0 {
			zeros := int64(1)
			for i <= limit && h.counts[i] == 0 {
				zeros++
				i++
			}
			if zeros > 1 {
				count = -zeros
			}
		}
		buf = appendVarint(buf, uint64((count<<1)^(count>>63)))
	}
	binary.BigEndian.PutUint32(buf[4:], uint32(len(buf)-hdrV2HeaderSize))
	return buf
}

// appendVarint is hdrhistogram's LEB128-64b9B: 7 bits a byte, the ninth byte whole.
func appendVarint(buf []byte, v uint64) []byte {
	for i := 0; i < 8; i++ {
		if v>>7 == 0 {
			return append(buf, byte(v))
		}
		buf = append(buf, byte(v&0x7f)|0x80)
		v >>= 7
	}
	return append(buf, byte(v))
}

// encodeCompressed is the V2 + deflate encoding: its cookie, the zlib stream's length, then
// the zlib stream of the V2 encoding.
func (h *histogram) encodeCompressed() []byte {
	var out bytes.Buffer
	out.Write(make([]byte, 8))
	z := zlib.NewWriter(&out)
	z.Write(h.encodeV2())
	z.Close()
	b := out.Bytes()
	binary.BigEndian.PutUint32(b[0:], hdrV2CompressedCookie)
	binary.BigEndian.PutUint32(b[4:], uint32(len(b)-8))
	return b
}

func (h *histogram) MarshalJSON() ([]byte, error) {
	return []byte(`"` + base64.StdEncoding.EncodeToString(h.encodeCompressed()) + `"`), nil
}

// decodeHistogram reads what encodeCompressed (or the Rust side) wrote, either cookie: for
// the tests, and as the check that the encoding reads back.
func decodeHistogram(b []byte) (*histogram, error) {
	if len(b) < 8 {
		return nil, errors.New("a histogram shorter than its cookie and length")
	}
	if binary.BigEndian.Uint32(b) == hdrV2CompressedCookie {
		z, err := zlib.NewReader(bytes.NewReader(b[8:]))
		if err != nil {
			return nil, err
		}
		if b, err = io.ReadAll(z); err != nil {
			return nil, err
		}
	}
	if len(b) < hdrV2HeaderSize || binary.BigEndian.Uint32(b) != hdrV2Cookie {
		return nil, errors.New("not an HdrHistogram V2 encoding")
	}
	payload := b[hdrV2HeaderSize:]
	if n := binary.BigEndian.Uint32(b[4:]); int(n) != len(payload) {
		return nil, fmt.Errorf("the payload is %d bytes, the header says %d", len(payload), n)
	}
	digits := uint8(binary.BigEndian.Uint32(b[12:]))
	h := newHistogram(binary.BigEndian.Uint64(b[16:]), binary.BigEndian.Uint64(b[24:]), digits)
	index := 0
	for len(payload) > 0 {
		var v uint64
		n := 0
		for shift := 0; ; shift += 7 {
			if n == len(payload) {
				return nil, errors.New("a varint cut short")
			}
			c := payload[n]
			n++
			if shift == 56 {
				v |= uint64(c) << 56
				break
			}
			v |= uint64(c&0x7f) << shift
			if c&0x80 == 0 {
				break
			}
		}
		payload = payload[n:]
		count := int64(v>>1) ^ -int64(v&1)
		if count < 0 {
			index += int(-count)
			continue
		}
		if count > 0 {
			if index >= len(h.counts) {
				return nil, errors.New("the counts run past the histogram's range")
			}
			h.counts[index] = uint64(count)
			h.total += uint64(count)
			h.maxIndex = uint64(index)
		}
		index++
	}
	return h, nil
}
