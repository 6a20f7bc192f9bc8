/* SPDX-License-Identifier: MIT */
/*
 * fpgad_simframe.h - the frame format of fpgad's simulated card.
 *
 * The sim backend's C2H sources write frames in this format and its H2C
 * sinks check them; a client verifies what it receives with the same code,
 * on the CPU or in a CUDA kernel.  Header only, no dependencies beyond
 * <stdint.h>, <stddef.h> and <string.h>.
 *
 * A frame of L bytes (L >= FPGAD_SIMFRAME_HDR_SIZE) is
 *
 *   [0, 64)  struct fpgad_simframe_hdr: magic, header size, sequence number
 *            N, frame length L, source id, the CRC-32C of the payload (when
 *            flags has FPGAD_SIMFRAME_F_CRC), a checksum over the header
 *   [64, L)  payload: bytes of the pattern starting at byte offset
 *            fpgad_simframe_payload_offset(N) = (N mod 4093) * 8
 *
 * The pattern is the endless little-endian sequence of 64-bit words
 * pattern[i] = fpgad_simframe_mix(i) (splitmix64).  Because consecutive
 * frames start at different offsets, a payload left over from another
 * frame (stale), a payload mixed from two frames (torn) or a header reused
 * with another payload is caught; a duplicated or missing frame shows in
 * the sequence number.  Producing a frame is one memcpy from a local copy
 * of the pattern, checking it is one memcmp; a GPU thread computes word i
 * of frame N as fpgad_simframe_payload_word(N, i) without any table.
 *
 * All multi-byte fields are little-endian (the byte order of the hosts and
 * GPUs fpgad runs on; the code stores native words).
 */
#ifndef FPGAD_SIMFRAME_H
#define FPGAD_SIMFRAME_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define FPGAD_HD __host__ __device__
#else
#define FPGAD_HD
#endif

#define FPGAD_SIMFRAME_MAGIC 0x4d52465344475046ull	/* "FPGDSFRM" */
#define FPGAD_SIMFRAME_HDR_SIZE 64u
/* Payload start offsets cycle through this many words (a prime). */
#define FPGAD_SIMFRAME_OFFSET_WORDS 4093u
/* Header flags. */
#define FPGAD_SIMFRAME_F_CRC 0x1u	/* payload_crc is the payload's CRC-32C */

/* Pass as @expect_seq to accept any sequence number. */
#define FPGAD_SIMFRAME_ANY_SEQ UINT64_MAX

/* Results of fpgad_simframe_check(), all distinct and negative. */
enum fpgad_simframe_result {
	FPGAD_SIMFRAME_OK = 0,
	/* magic, header size or checksum */
	FPGAD_SIMFRAME_BAD_HEADER = -1,
	/* the header's length is not the buffer's */
	FPGAD_SIMFRAME_BAD_LENGTH = -2,
	/* not the sequence number expected */
	FPGAD_SIMFRAME_BAD_SEQ = -3,
	/* the payload differs from the pattern */
	FPGAD_SIMFRAME_BAD_PAYLOAD = -4,
};

struct fpgad_simframe_hdr {
	uint64_t magic;		/* FPGAD_SIMFRAME_MAGIC */
	uint32_t hdr_size;	/* FPGAD_SIMFRAME_HDR_SIZE */
	uint32_t source;	/* card channel (engine) that produced it */
	uint64_t seq;		/* frame number N, from 0 per source */
	uint64_t length;	/* whole frame, header included */
	uint32_t payload_crc;	/* CRC-32C of bytes [64, length) */
	uint32_t flags;		/* FPGAD_SIMFRAME_F_* */
	uint64_t reserved[2];	/* zero */
	uint64_t check;		/* fpgad_simframe_hdr_check() of it */
};

#ifdef __cplusplus
static_assert(sizeof(struct fpgad_simframe_hdr) == FPGAD_SIMFRAME_HDR_SIZE,
	      "simframe header is 64 bytes");
#else
_Static_assert(sizeof(struct fpgad_simframe_hdr) == FPGAD_SIMFRAME_HDR_SIZE,
	       "simframe header is 64 bytes");
#endif

/* splitmix64: a cheap, well-mixed 64-bit bijection. */
FPGAD_HD static inline uint64_t fpgad_simframe_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* Word @index of the pattern. */
FPGAD_HD static inline uint64_t fpgad_simframe_pattern_word(uint64_t index)
{
	return fpgad_simframe_mix(index);
}

/* Byte offset into the pattern where frame @seq's payload starts. */
FPGAD_HD static inline uint64_t fpgad_simframe_payload_offset(uint64_t seq)
{
	return (seq % FPGAD_SIMFRAME_OFFSET_WORDS) * 8u;
}

/* Payload word @i (bytes [64 + 8i, 72 + 8i) of the frame) of frame @seq. */
FPGAD_HD static inline uint64_t fpgad_simframe_payload_word(uint64_t seq,
							    uint64_t i)
{
	return fpgad_simframe_pattern_word(seq % FPGAD_SIMFRAME_OFFSET_WORDS +
					   i);
}

/*
 * Bytes of pattern needed to produce or check every frame of up to
 * @max_frame bytes with one memcpy or memcmp: the largest payload plus the
 * largest start offset, rounded up to whole words.
 */
FPGAD_HD static inline uint64_t fpgad_simframe_pattern_size(uint64_t max_frame)
{
	uint64_t payload = max_frame > FPGAD_SIMFRAME_HDR_SIZE ?
			   max_frame - FPGAD_SIMFRAME_HDR_SIZE : 0;

	return (payload + 7u) / 8u * 8u + FPGAD_SIMFRAME_OFFSET_WORDS * 8u;
}

/* Write the first @bytes bytes of the pattern into @buf (@bytes % 8 == 0). */
FPGAD_HD static inline void fpgad_simframe_pattern_fill(void *buf,
							uint64_t bytes)
{
	uint64_t *w = (uint64_t *)buf;
	uint64_t i;

	for (i = 0; i < bytes / 8u; i++)
		w[i] = fpgad_simframe_pattern_word(i);
}

/* The checksum of a header: everything before the check field, mixed. */
FPGAD_HD static inline uint64_t
fpgad_simframe_hdr_check(const struct fpgad_simframe_hdr *h)
{
	uint64_t c = FPGAD_SIMFRAME_MAGIC;

	c = fpgad_simframe_mix(c ^ h->magic);
	c = fpgad_simframe_mix(c ^ ((uint64_t)h->hdr_size |
				    (uint64_t)h->source << 32));
	c = fpgad_simframe_mix(c ^ h->seq);
	c = fpgad_simframe_mix(c ^ h->length);
	c = fpgad_simframe_mix(c ^ ((uint64_t)h->payload_crc |
				    (uint64_t)h->flags << 32));
	c = fpgad_simframe_mix(c ^ h->reserved[0]);
	c = fpgad_simframe_mix(c ^ h->reserved[1]);
	return c;
}

/* Build the header of frame @seq, @length bytes long, from @source. */
FPGAD_HD static inline void
fpgad_simframe_hdr_init(struct fpgad_simframe_hdr *h, uint64_t seq,
			uint64_t length, uint32_t source)
{
	h->magic = FPGAD_SIMFRAME_MAGIC;
	h->hdr_size = FPGAD_SIMFRAME_HDR_SIZE;
	h->source = source;
	h->seq = seq;
	h->length = length;
	h->payload_crc = 0;
	h->flags = 0;
	h->reserved[0] = 0;
	h->reserved[1] = 0;
	h->check = fpgad_simframe_hdr_check(h);
}

/* Record the payload's CRC-32C (computed by the card) in a header. */
FPGAD_HD static inline void
fpgad_simframe_hdr_set_crc(struct fpgad_simframe_hdr *h, uint32_t crc)
{
	h->payload_crc = crc;
	h->flags |= FPGAD_SIMFRAME_F_CRC;
	h->check = fpgad_simframe_hdr_check(h);
}

/*
 * Write the first @n bytes of frame @seq (@length bytes in all, from
 * @source) into @buf; @n < @length is a frame cut short by a small buffer.
 * @pattern (@pattern_size bytes, from fpgad_simframe_pattern_fill()) makes
 * the payload one memcpy; with NULL or too small a pattern the words are
 * computed instead (same bytes, slower).  Returns 0, or
 * FPGAD_SIMFRAME_BAD_LENGTH when @length is shorter than a header.
 */
FPGAD_HD static inline int
fpgad_simframe_fill_part(void *buf, uint64_t n, uint64_t length, uint64_t seq,
			 uint32_t source, const void *pattern,
			 uint64_t pattern_size)
{
	unsigned char *p = (unsigned char *)buf;
	struct fpgad_simframe_hdr h;
	uint64_t off, payload, i;

	if (length < FPGAD_SIMFRAME_HDR_SIZE)
		return FPGAD_SIMFRAME_BAD_LENGTH;
	if (n > length)
		n = length;
	fpgad_simframe_hdr_init(&h, seq, length, source);
	memcpy(p, &h, n < sizeof(h) ? n : sizeof(h));
	if (n <= FPGAD_SIMFRAME_HDR_SIZE)
		return 0;

	payload = n - FPGAD_SIMFRAME_HDR_SIZE;
	p += FPGAD_SIMFRAME_HDR_SIZE;
	off = fpgad_simframe_payload_offset(seq);
	if (pattern && pattern_size >= off && pattern_size - off >= payload) {
		memcpy(p, (const unsigned char *)pattern + off, payload);
		return 0;
	}
	for (i = 0; i < payload / 8u; i++) {
		uint64_t w = fpgad_simframe_payload_word(seq, i);

		memcpy(p + i * 8u, &w, 8);
	}
	if (payload % 8u) {
		uint64_t w = fpgad_simframe_payload_word(seq, i);

		memcpy(p + i * 8u, &w, payload % 8u);
	}
	return 0;
}

/* Write all @length bytes of frame @seq into @frame; see _fill_part(). */
FPGAD_HD static inline int
fpgad_simframe_fill(void *frame, uint64_t length, uint64_t seq,
		    uint32_t source, const void *pattern, uint64_t pattern_size)
{
	return fpgad_simframe_fill_part(frame, length, length, seq, source,
					pattern, pattern_size);
}

/* First byte where @a and @b (@n bytes) differ, @n if none. */
FPGAD_HD static inline uint64_t fpgad_simframe_first_diff(const void *a,
							  const void *b,
							  uint64_t n)
{
	const unsigned char *x = (const unsigned char *)a;
	const unsigned char *y = (const unsigned char *)b;
	uint64_t i;

	for (i = 0; i < n; i++)
		if (x[i] != y[i])
			break;
	return i;
}

/* Whether @n bytes at @a and @b are equal (memcmp where there is one). */
FPGAD_HD static inline int fpgad_simframe_equal(const void *a, const void *b,
						uint64_t n)
{
#ifdef __CUDA_ARCH__
	return fpgad_simframe_first_diff(a, b, n) == n;
#else
	return memcmp(a, b, n) == 0;
#endif
}

/*
 * Check the @length-byte frame at @frame.  @expect_seq is the sequence
 * number it must carry, or FPGAD_SIMFRAME_ANY_SEQ.  @pattern as for
 * _fill_part() (NULL: compute the words).  Returns FPGAD_SIMFRAME_OK or the
 * first problem found, in this order: BAD_HEADER (too short for a header,
 * wrong magic, header size or checksum), BAD_LENGTH (the header's length
 * is not @length), BAD_SEQ, BAD_PAYLOAD.  On a problem, *@ret_bad_offset
 * (when not NULL) is the offset of the first bad byte: of the field at
 * fault for header problems, of the first differing byte for the payload.
 * A frame is read only; it may live in memory the caller cannot write.
 */
FPGAD_HD static inline int
fpgad_simframe_check(const void *frame, uint64_t length, uint64_t expect_seq,
		     const void *pattern, uint64_t pattern_size,
		     uint64_t *ret_bad_offset)
{
	const unsigned char *p = (const unsigned char *)frame;
	struct fpgad_simframe_hdr h;
	uint64_t off, payload, i, bad;
	int ret;

	if (length < FPGAD_SIMFRAME_HDR_SIZE) {
		bad = length;
		ret = FPGAD_SIMFRAME_BAD_HEADER;
		goto fail;
	}
	memcpy(&h, p, sizeof(h));
	if (h.magic != FPGAD_SIMFRAME_MAGIC) {
		bad = offsetof(struct fpgad_simframe_hdr, magic);
		ret = FPGAD_SIMFRAME_BAD_HEADER;
		goto fail;
	}
	if (h.hdr_size != FPGAD_SIMFRAME_HDR_SIZE) {
		bad = offsetof(struct fpgad_simframe_hdr, hdr_size);
		ret = FPGAD_SIMFRAME_BAD_HEADER;
		goto fail;
	}
	if (h.check != fpgad_simframe_hdr_check(&h)) {
		bad = offsetof(struct fpgad_simframe_hdr, check);
		ret = FPGAD_SIMFRAME_BAD_HEADER;
		goto fail;
	}
	if (h.length != length) {
		bad = offsetof(struct fpgad_simframe_hdr, length);
		ret = FPGAD_SIMFRAME_BAD_LENGTH;
		goto fail;
	}
	if (expect_seq != FPGAD_SIMFRAME_ANY_SEQ && h.seq != expect_seq) {
		bad = offsetof(struct fpgad_simframe_hdr, seq);
		ret = FPGAD_SIMFRAME_BAD_SEQ;
		goto fail;
	}

	payload = length - FPGAD_SIMFRAME_HDR_SIZE;
	p += FPGAD_SIMFRAME_HDR_SIZE;
	off = fpgad_simframe_payload_offset(h.seq);
	if (pattern && pattern_size >= off && pattern_size - off >= payload) {
		const unsigned char *q = (const unsigned char *)pattern + off;

		if (fpgad_simframe_equal(p, q, payload))
			return FPGAD_SIMFRAME_OK;
		bad = FPGAD_SIMFRAME_HDR_SIZE +
		      fpgad_simframe_first_diff(p, q, payload);
		ret = FPGAD_SIMFRAME_BAD_PAYLOAD;
		goto fail;
	}
	for (i = 0; i < (payload + 7u) / 8u; i++) {
		uint64_t w = fpgad_simframe_payload_word(h.seq, i);
		uint64_t n = payload - i * 8u < 8u ? payload - i * 8u : 8u;

		if (!fpgad_simframe_equal(p + i * 8u, &w, n)) {
			bad = FPGAD_SIMFRAME_HDR_SIZE + i * 8u +
			      fpgad_simframe_first_diff(p + i * 8u, &w, n);
			ret = FPGAD_SIMFRAME_BAD_PAYLOAD;
			goto fail;
		}
	}
	return FPGAD_SIMFRAME_OK;

fail:
	if (ret_bad_offset)
		*ret_bad_offset = bad;
	return ret;
}

/* A short name for a fpgad_simframe_check() result. */
FPGAD_HD static inline const char *fpgad_simframe_strerror(int result)
{
	switch (result) {
	case FPGAD_SIMFRAME_OK:
		return "ok";
	case FPGAD_SIMFRAME_BAD_HEADER:
		return "bad header";
	case FPGAD_SIMFRAME_BAD_LENGTH:
		return "wrong length";
	case FPGAD_SIMFRAME_BAD_SEQ:
		return "wrong sequence number";
	case FPGAD_SIMFRAME_BAD_PAYLOAD:
		return "payload mismatch";
	default:
		return "unknown";
	}
}

#endif
