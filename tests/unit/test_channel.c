// SPDX-License-Identifier: MIT
/*
 * test_channel.c - channels and leases in one process: the real channel,
 * lease, ring and frame-ring code over the simulated card and host
 * memory, with this test as the client reading the descriptor ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel/channel.h"
#include "channel/channel_impl.h"
#include "channel/frame_producer.h"
#include "channel/lease.h"
#include "device/device.h"
#include "device/sim/sim.h"
#include "fpgad.h"
#include "fpgad_simframe.h"
#include "protocol.h"
#include "frame_consumer.h"
#include "log.h"

struct fixture {
	struct config cfg;
	struct device *dev;
	struct channel *ch;
	struct session s1, s2;
};

/* The client's side of one lease. */
struct reader {
	struct lease_grant g;
	uint8_t *data;
	size_t data_len;
	void *desc;
	size_t desc_len;
	struct frame_consumer *cons;
	void *pattern;
	uint64_t psize;
	ino_t ring_ino;		/* which memfd the data ring is */
};

/* The simulated card as a channel's source. */
static const struct source *sim_source(struct device *dev)
{
	static struct source src;

	src = (struct source){ .name = "card", .ops = &device_sim_ops, .dev = dev };
	return &src;
}

static void *map(int fd, size_t len, int prot)
{
	void *m = mmap(NULL, len, prot, MAP_SHARED, fd, 0);

	assert_true(m != MAP_FAILED);
	return m;
}

/* What the handoff socket does for the lessee: its rings' descriptors. */
static void claim(struct fixture *fx, struct session *s, struct reader *r,
		  int *ret_fds)
{
	struct handoff_peer peer = { .pid = s->peer.pid, .uid = s->peer.uid };
	struct handoff_peer thief = { .pid = s->peer.pid + 1, .uid = s->peer.uid };
	struct lease *l;
	unsigned n = 0;
	char err[160];

	/* The token without the lessee's process: refused, and still good. */
	assert_int_equal(lease_claim(fx->ch, r->g.token, &thief, ret_fds, &n, &l,
				     err, sizeof(err)), -EACCES);
	assert_non_null(strstr(err, "not pid"));
	thief.pid = s->peer.pid;
	thief.uid = s->peer.uid + 1;
	assert_int_equal(lease_claim(fx->ch, r->g.token, &thief, ret_fds, &n, &l,
				     err, sizeof(err)), -EACCES);
	assert_int_equal(lease_claim(fx->ch, r->g.token, &peer, ret_fds, &n, &l,
				     err, sizeof(err)), 0);
	assert_int_equal(n, 2);
	assert_ptr_equal(l, lease_find(fx->ch, s));
	/* A token is good once. */
	assert_int_equal(lease_claim(fx->ch, r->g.token, &peer, ret_fds, &n, &l,
				     err, sizeof(err)), -ENOENT);
}

static void reader_attach(struct reader *r, struct fixture *fx,
			  struct session *s)
{
	const struct config_channel *cc = channel_config(fx->ch);
	struct stat st;
	int fds[2];


	claim(fx, s, r, fds);
	assert_int_equal(fstat(fds[1], &st), 0);
	r->ring_ino = st.st_ino;
	r->data_len = r->g.ring_size;
	r->data = map(fds[1], r->data_len, PROT_READ);
	r->desc_len = r->g.desc_size;
	assert_true(r->desc_len >= frame_ring_size(frame_ring_desc_count_for(cc->slots)));
	r->desc = map(fds[0], r->desc_len, PROT_READ | PROT_WRITE);
	assert_int_equal(frame_consumer_attach(r->desc, r->desc_len, &r->cons), 0);
	r->psize = fpgad_simframe_pattern_size(cc->frame_size);
	r->pattern = malloc(r->psize);
	assert_non_null(r->pattern);
	fpgad_simframe_pattern_fill(r->pattern, r->psize);
}

static void reader_detach(struct reader *r)
{
	frame_consumer_free(r->cons);
	munmap(r->desc, r->desc_len);
	munmap(r->data, r->data_len);
	free(r->pattern);
}

/* Take the next frame, waiting for it; checks its content. */
static void take(struct reader *r, const struct config_channel *cc,
		 struct frame_ring_frame *f)
{
	uint64_t off;
	int n;

	for (n = 0; n < 500; n++) {
		if (frame_consumer_claim(r->cons, f) == 0)
			break;
		assert_int_not_equal(frame_consumer_wait(r->cons, 10), -ESTALE);
	}
	assert_true(n < 500);
	assert_int_equal(fpgad_simframe_check(r->data + (uint64_t)f->slot * cc->slot_size,
					      f->length, f->seq, r->pattern,
					      r->psize, &off), 0);
}

static int open_lease(struct fixture *fx, struct session *s, bool shared,
		      struct reader *r)
{
	char err[256];

	memset(r, 0, sizeof(*r));
	return lease_open(fx->ch, s, shared, &fx->cfg.control, &r->g, err,
			    sizeof(err));
}

static void make(struct fixture *fx, const char *faults, enum ring_policy p,
		 unsigned slots)
{
	struct config_channel *cc = &fx->cfg.channels[0];

	config_defaults(&fx->cfg);
	cc->memory = MEMORY_HOST;
	cc->slots = slots;
	cc->slot_size = 64 * 1024;
	cc->frame_size = 64 * 1024;
	cc->policy = p;
	if (faults)
		setenv(SIM_FAULTS_ENV, faults, 1);
	assert_int_equal(device_sim_ops.open(&fx->cfg, &fx->dev, NULL, 0), 0);
	unsetenv(SIM_FAULTS_ENV);
	assert_int_equal(channel_create(&fx->cfg, cc, sim_source(fx->dev), &fx->ch, NULL, 0), 0);
	fx->s1.peer.pid = 101;
	fx->s2.peer.pid = 102;
}

static void unmake(struct fixture *fx)
{
	lease_end_all(fx->ch);
	channel_destroy(fx->ch);
	device_sim_ops.close(fx->dev);
}

/*
 * A ring that reaches its lessee as a file descriptor is refused, with the
 * reason, to a client whose Hello spoke protocol 2 (it could open only a
 * CUDA IPC handle); host rings and IPC rings are not.
 */
static void test_fd_ring_needs_protocol_3(void **state)
{
	struct fixture fx = { 0 };
	struct reader r = { 0 };
	char err[256] = "";

	(void)state;
	make(&fx, NULL, POLICY_BLOCK, 4);
	fx.s1.hello_version = FPGAD_PROTOCOL_GPU_FD - 1;
	fx.ch->memory = MEMORY_CUDA;
	for (enum gpu_export e = GPU_EXPORT_FD; e <= GPU_EXPORT_HOST; e++) {
		fx.ch->mem->gpu_export = e;
		assert_int_equal(lease_open(fx.ch, &fx.s1, false, &fx.cfg.control,
					    &r.g, err, sizeof(err)), -EPROTO);
		assert_non_null(strstr(err, "protocol 2 cannot map"));
		assert_non_null(strstr(err, gpu_export_name(e)));
		assert_null(lease_find(fx.ch, &fx.s1));
		assert_int_equal(protocol_status_code(-EPROTO),
				 FPGAD__STATUS_CODE__STATUS_VERSION);
	}
	fx.s1.hello_version = FPGAD_PROTOCOL_GPU_FD;
	fx.ch->memory = MEMORY_HOST;
	fx.ch->mem->gpu_export = GPU_EXPORT_IPC;
	fx.s2.hello_version = FPGAD_PROTOCOL_GPU_FD - 1;
	assert_int_equal(open_lease(&fx, &fx.s2, false, &r), 0);
	unmake(&fx);
}

static void test_stream_and_verify(void **state)
{
	struct fixture fx = { 0 };
	struct frame_ring_frame f;
	struct channel_stats st;
	struct reader r;
	uint64_t last = 0;

	(void)state;
	make(&fx, NULL, POLICY_BLOCK, 8);
	assert_false(channel_is_streaming(fx.ch));
	assert_int_equal(open_lease(&fx, &fx.s1, false, &r), 0);
	assert_true(channel_is_streaming(fx.ch));
	assert_true((lease_find(fx.ch, &fx.s1) != NULL));
	assert_int_equal(r.g.memory, MEMORY_HOST);
	assert_int_equal(r.g.mode, MODE_HOST);
	reader_attach(&r, &fx, &fx.s1);
	for (int i = 0; i < 2000; i++) {
		take(&r, channel_config(fx.ch), &f);
		if (i)
			assert_int_equal(f.seq, last + 1);	/* block: no gap */
		last = f.seq;
		assert_int_equal(frame_consumer_release(r.cons, &f), 0);
	}
	channel_get_stats(fx.ch, &st);
	assert_true(st.frames >= 2000);
	assert_int_equal(st.drops, 0);
	assert_int_equal(st.leases, 1);
	assert_int_equal(fx.s1.n_leases, 1);
	assert_int_equal(lease_close(fx.ch, &fx.s1, 0), 0);
	assert_int_equal(fx.s1.n_leases, 0);
	assert_int_equal(fx.s1.pinned, 0);
	assert_false(channel_is_streaming(fx.ch));
	/* The client learns that the lease ended. */
	assert_true(frame_consumer_events(r.cons) & FPGAD_EVENT_CLOSED);
	assert_int_equal(lease_close(fx.ch, &fx.s1, 0), -ENOENT);
	reader_detach(&r);

	/* The next lessee gets a ring of its own, not the one r mapped. */
	{
		struct reader r2;
		struct stat st2;
		int fds[2];

		assert_int_equal(open_lease(&fx, &fx.s2, false, &r2), 0);
		assert_int_not_equal(r2.g.lease_id, r.g.lease_id);
		claim(&fx, &fx.s2, &r2, fds);
		assert_int_equal(fstat(fds[1], &st2), 0);
		assert_true(r.ring_ino != st2.st_ino);
		r2.data_len = r2.g.ring_size;
		r2.data = map(fds[1], r2.data_len, PROT_READ);
		r2.desc_len = r2.g.desc_size;
		r2.desc = map(fds[0], r2.desc_len, PROT_READ | PROT_WRITE);
		assert_int_equal(frame_consumer_attach(r2.desc, r2.desc_len,
						       &r2.cons), 0);
		r2.psize = fpgad_simframe_pattern_size(channel_config(fx.ch)->frame_size);
		r2.pattern = malloc(r2.psize);
		fpgad_simframe_pattern_fill(r2.pattern, r2.psize);
		take(&r2, channel_config(fx.ch), &f);
		assert_int_equal(frame_consumer_release(r2.cons, &f), 0);
		assert_int_equal(lease_close(fx.ch, &fx.s2, 0), 0);
		reader_detach(&r2);
	}
	unmake(&fx);
}

static void test_exclusive_and_shared(void **state)
{
	struct fixture fx = { 0 };
	struct reader a, b;

	(void)state;
	make(&fx, NULL, POLICY_BLOCK, 4);
	assert_int_equal(open_lease(&fx, &fx.s1, false, &a), 0);
	assert_int_equal(open_lease(&fx, &fx.s1, false, &b), -EALREADY);
	assert_int_equal(open_lease(&fx, &fx.s2, false, &b), -EBUSY);
	assert_int_equal(open_lease(&fx, &fx.s2, true, &b), -EBUSY);
	assert_int_equal(lease_close(fx.ch, &fx.s1, 0), 0);

	/* Shared readers: each sees every frame from when it joined, in order. */
	assert_int_equal(open_lease(&fx, &fx.s1, true, &a), 0);
	assert_int_equal(open_lease(&fx, &fx.s2, true, &b), 0);
	{
		struct reader *rd[2] = { &a, &b };
		uint64_t last[2] = { 0, 0 }, seen[2] = { 0, 0 };
		struct frame_ring_frame fb;
		uint64_t off;
		int idle = 0;

		reader_attach(&a, &fx, &fx.s1);
		reader_attach(&b, &fx, &fx.s2);
		/* Under block, a slot is free only when both let it go. */
		while ((seen[0] < 300 || seen[1] < 300) && idle < 500) {
			bool got = false;

			for (int k = 0; k < 2; k++) {
				struct frame_ring_frame f;

				if (frame_consumer_claim(rd[k]->cons, &f) < 0)
					continue;
				got = true;
				if (seen[k])
					assert_int_equal(f.seq, last[k] + 1);
				assert_int_equal(fpgad_simframe_check(
					rd[k]->data + (uint64_t)f.slot * 65536, f.length,
					f.seq, rd[k]->pattern, rd[k]->psize, &off), 0);
				last[k] = f.seq;
				seen[k]++;
				assert_int_equal(frame_consumer_release(rd[k]->cons, &f), 0);
			}
			idle = got ? 0 : idle + 1;
			if (!got)
				frame_consumer_wait(b.cons, 10);
		}
		assert_true(seen[0] >= 300 && seen[1] >= 300);
		/* b joined later: its frames are a's latest ones. */
		assert_true(last[1] <= last[0] + 4 && last[0] <= last[1] + 4);
		/* An exclusive opener is refused while readers share it. */
		assert_int_equal(open_lease(&fx, &(struct session){ 0 }, false,
					    &(struct reader){ 0 }), -EBUSY);
		lease_close(fx.ch, &fx.s1, 0);
		/* b goes on alone. */
		for (int i = 0; i < 100; i++) {
			take(&b, channel_config(fx.ch), &fb);
			assert_int_equal(frame_consumer_release(b.cons, &fb), 0);
		}
		lease_close(fx.ch, &fx.s2, 0);
		reader_detach(&a);
		reader_detach(&b);
	}
	assert_false(channel_is_streaming(fx.ch));
	unmake(&fx);
}

static void test_limits(void **state)
{
	struct fixture fx = { 0 };
	struct reader r;

	(void)state;
	make(&fx, NULL, POLICY_BLOCK, 4);
	fx.cfg.control.max_leases = 0;
	assert_int_equal(open_lease(&fx, &fx.s1, false, &r), -ENOSPC);
	fx.cfg.control.max_leases = 4;
	fx.cfg.control.max_pinned = 4 * 64 * 1024 - 1;
	assert_int_equal(open_lease(&fx, &fx.s1, false, &r), -ENOSPC);
	assert_false(channel_is_streaming(fx.ch));
	fx.cfg.control.max_pinned = 4 * 64 * 1024;
	assert_int_equal(open_lease(&fx, &fx.s1, false, &r), 0);
	assert_int_equal(fx.s1.pinned, 4 * 64 * 1024);
	lease_close(fx.ch, &fx.s1, 0);
	unmake(&fx);
}

/* drop-oldest: the frames a client holds are never re-armed, nor stalls counted. */
static void test_drop_oldest_spares_held(void **state)
{
	struct fixture fx = { 0 };
	struct frame_ring_frame held[2], f;
	struct channel_stats st;
	struct reader r;
	uint64_t off;

	(void)state;
	make(&fx, NULL, POLICY_DROP_OLDEST, 4);
	assert_int_equal(open_lease(&fx, &fx.s1, false, &r), 0);
	reader_attach(&r, &fx, &fx.s1);
	take(&r, channel_config(fx.ch), &held[0]);
	take(&r, channel_config(fx.ch), &held[1]);
	for (int i = 0; i < 3000; i++) {
		take(&r, channel_config(fx.ch), &f);
		assert_int_not_equal(f.slot, held[0].slot);
		assert_int_not_equal(f.slot, held[1].slot);
		assert_int_equal(frame_consumer_release(r.cons, &f), 0);
		if (i % 500 == 0)
			usleep(5000);	/* let the card overrun the reader */
	}
	for (int k = 0; k < 2; k++)
		assert_int_equal(fpgad_simframe_check(
			r.data + (uint64_t)held[k].slot * 65536, held[k].length,
			held[k].seq, r.pattern, r.psize, &off), 0);
	channel_get_stats(fx.ch, &st);
	assert_true(st.drops > 0);
	/* The ring waited with the newest kept or all held: no stall. */
	assert_int_equal(st.stalls, 0);
	assert_int_equal(frame_consumer_release(r.cons, &held[0]), 0);
	assert_int_equal(frame_consumer_release(r.cons, &held[1]), 0);
	lease_close(fx.ch, &fx.s1, 0);
	reader_detach(&r);
	unmake(&fx);
}

/* What a GPU stream does for a stream-ordered release: two plain stores. */
static void gpu_release(const struct frame_async *a)
{
	__atomic_store_n((uint32_t *)a->state_low, a->released_low,
			 __ATOMIC_SEQ_CST);
	__atomic_store_n((uint32_t *)a->done, a->count, __ATOMIC_SEQ_CST);
}

/*
 * Stream-ordered releases wake nobody: a stream starved of slots still
 * notices them and goes on.
 */
static void test_async_release(void **state)
{
	struct fixture fx = { 0 };
	struct frame_ring_frame f[4];
	struct frame_async a[4];
	struct lease *l;
	struct reader r;

	(void)state;
	make(&fx, NULL, POLICY_BLOCK, 4);
	assert_int_equal(open_lease(&fx, &fx.s1, false, &r), 0);
	reader_attach(&r, &fx, &fx.s1);
	l = lease_find(fx.ch, &fx.s1);
	for (int round = 0; round < 50; round++) {
		/* Hold every slot: the stream has nothing to arm. */
		for (int i = 0; i < 4; i++)
			take(&r, channel_config(fx.ch), &f[i]);
		for (int i = 0; i < 4; i++)
			assert_int_equal(frame_consumer_async_words(r.cons, &f[i],
								    &a[i]), 0);
		assert_true(frame_producer_async_pending(l->prod));
		usleep(2000);	/* the stream goes to look for releases */
		for (int i = 0; i < 4; i++)
			gpu_release(&a[i]);
		assert_false(frame_producer_async_pending(l->prod));
		/* A frame that is not held cannot be released so. */
		assert_int_equal(frame_consumer_async_words(r.cons, &f[0], &a[0]),
				 -EINVAL);
	}
	/* Streaming went on: the next frames come. */
	take(&r, channel_config(fx.ch), &f[0]);
	assert_int_equal(frame_consumer_release(r.cons, &f[0]), 0);
	lease_close(fx.ch, &fx.s1, 0);
	reader_detach(&r);
	unmake(&fx);
}

/* Every transfer fails: the channel resets, retries, then gives up. */
static void test_repeated_failures_fail_channel(void **state)
{
	struct fixture fx = { 0 };
	struct channel_stats st;
	struct reader r, r2;
	int i;

	(void)state;
	make(&fx, "error=1", POLICY_BLOCK, 4);
	assert_int_equal(open_lease(&fx, &fx.s1, false, &r), 0);
	for (i = 0; i < 500; i++) {
		channel_get_stats(fx.ch, &st);
		if (st.state == CHANNEL_FAILED)
			break;
		usleep(2000);
	}
	assert_int_equal(st.state, CHANNEL_FAILED);
	assert_int_equal(st.frames, 0);
	assert_true(st.errors >= 5);
	assert_true(st.recoveries >= 5);
	/* A reset arms the card again; this one fails every transfer. */
	{
		char err[128];
		uint64_t before = st.errors;

		assert_int_equal(channel_reset(fx.ch, err, sizeof(err)), 0);
		for (i = 0; i < 500; i++) {
			channel_get_stats(fx.ch, &st);
			if (st.errors >= before + 5 && st.state == CHANNEL_FAILED)
				break;
			usleep(2000);
		}
		assert_true(st.errors >= before + 5);
		assert_int_equal(st.state, CHANNEL_FAILED);
	}
	lease_close(fx.ch, &fx.s1, 0);
	/* FAILED refuses new leases, by name, until it is reset. */
	assert_int_equal(open_lease(&fx, &fx.s2, false, &r2), -EIO);
	{
		char err[128];

		assert_int_equal(channel_reset(fx.ch, err, sizeof(err)), 0);
		assert_int_equal(channel_state(fx.ch), CHANNEL_IDLE);
		assert_int_equal(channel_reset(fx.ch, err, sizeof(err)), -EALREADY);
		assert_non_null(strstr(err, "is idle, not failed"));
	}
	unmake(&fx);
}

/* h2c: empty buffers go out, filled frames reach the card's sink. */
static void test_h2c_send(void **state)
{
	struct fixture fx = { 0 };
	struct config_channel *cc = &fx.cfg.channels[0];
	struct frame_ring_frame f;
	struct channel_stats st;
	struct reader r;
	char err[256];
	int i;

	(void)state;
	config_defaults(&fx.cfg);
	cc->direction = DIR_H2C;
	cc->memory = MEMORY_HOST;
	cc->slots = 4;
	cc->slot_size = cc->frame_size = 64 * 1024;
	assert_int_equal(device_sim_ops.open(&fx.cfg, &fx.dev, NULL, 0), 0);
	assert_int_equal(channel_create(&fx.cfg, cc, sim_source(fx.dev), &fx.ch, NULL, 0), 0);
	assert_int_equal(lease_open(fx.ch, &fx.s1, true, &fx.cfg.control, &r.g,
				      err, sizeof(err)), -EINVAL);
	assert_int_equal(open_lease(&fx, &fx.s1, false, &r), 0);
	{
		int fds[2];

		claim(&fx, &fx.s1, &r, fds);
		r.data_len = r.g.ring_size;
		r.data = map(fds[1], r.data_len, PROT_READ | PROT_WRITE);
		r.desc_len = r.g.desc_size;
		r.desc = map(fds[0], r.desc_len, PROT_READ | PROT_WRITE);
	}
	assert_int_equal(frame_consumer_attach(r.desc, r.desc_len, &r.cons), 0);
	r.psize = fpgad_simframe_pattern_size(cc->frame_size);
	r.pattern = malloc(r.psize);
	fpgad_simframe_pattern_fill(r.pattern, r.psize);
	for (i = 0; i < 1000; i++) {
		int n;

		for (n = 0; n < 500 && frame_consumer_claim(r.cons, &f) < 0; n++)
			frame_consumer_wait(r.cons, 10);
		assert_true(n < 500);
		assert_int_equal(f.length, 0);
		fpgad_simframe_fill(r.data + (uint64_t)f.slot * cc->slot_size,
				    cc->frame_size, (uint64_t)i, 0, r.pattern, r.psize);
		/* Every 100th frame is torn: the card must notice. */
		if (i % 100 == 99)
			r.data[(uint64_t)f.slot * cc->slot_size + 4096] ^= 1;
		assert_int_equal(frame_consumer_submit(r.cons, &f, cc->frame_size), 0);
	}
	/*
	 * The card checks a frame before it posts its completion, which the
	 * stream counts after: wait for both counts.
	 */
	for (i = 0; i < 500; i++) {
		channel_get_stats(fx.ch, &st);
		if (st.card_good + st.card_bad >= 1000 && st.frames >= 1000)
			break;
		usleep(2000);
	}
	assert_int_equal(st.frames, 1000);
	assert_int_equal(st.card_good, 990);
	assert_int_equal(st.card_bad, 10);
	lease_close(fx.ch, &fx.s1, 0);
	reader_detach(&r);
	unmake(&fx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream_and_verify),
		cmocka_unit_test(test_fd_ring_needs_protocol_3),
		cmocka_unit_test(test_exclusive_and_shared),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_drop_oldest_spares_held),
		cmocka_unit_test(test_async_release),
		cmocka_unit_test(test_repeated_failures_fail_channel),
		cmocka_unit_test(test_h2c_send),
	};

	log_level = LOG_WARNING;
	return cmocka_run_group_tests_name("channel", tests, NULL, NULL);
}
