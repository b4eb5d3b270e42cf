/* test_keylock.c - one compile per CUBIN key at a time across threads
 * (compile/keylock.c): a second taker of a held key waits until it is given
 * back, a taker of another key does not, and a full table holds nothing
 * instead of blocking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "compile/keylock.h"

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

struct taker {
	const char *key;
	atomic_int started, held;
	double waited_ms;
};

static void *take(void *arg)
{
	struct taker *t = arg;
	double t0;

	atomic_store(&t->started, 1);
	t0 = now_ms();
	atomic_store(&t->held, ft_keylock_take(t->key));
	t->waited_ms = now_ms() - t0;
	if (atomic_load(&t->held))
		ft_keylock_give(t->key);
	return NULL;
}

static void test_same_key_waits(void **state)
{
	struct taker b = { .key = "00000000000000aa" }, c = { .key = "00000000000000bb" };
	pthread_t tb, tc;

	(void)state;
	assert_int_equal(ft_keylock_take("00000000000000aa"), 1);
	assert_int_equal(pthread_create(&tb, NULL, take, &b), 0);
	assert_int_equal(pthread_create(&tc, NULL, take, &c), 0);
	/* another key: taken at once while aa is held */
	assert_int_equal(pthread_join(tc, NULL), 0);
	assert_int_equal(atomic_load(&c.held), 1);
	/* the same key: still waiting 200 ms later */
	usleep(200 * 1000);
	assert_int_equal(atomic_load(&b.started), 1);
	assert_int_equal(atomic_load(&b.held), 0);
	ft_keylock_give("00000000000000aa");
	assert_int_equal(pthread_join(tb, NULL), 0);
	assert_int_equal(atomic_load(&b.held), 1);
	assert_true(b.waited_ms >= 150);
	/* given back by both: free again */
	assert_int_equal(ft_keylock_take("00000000000000aa"), 1);
	ft_keylock_give("00000000000000aa");
}

static void test_full_table_holds_nothing(void **state)
{
	char keys[FT_KEYLOCK_MAX][17];

	(void)state;
	for (int i = 0; i < FT_KEYLOCK_MAX; i++) {
		snprintf(keys[i], sizeof(keys[i]), "%016x", 0x1000 + i);
		assert_int_equal(ft_keylock_take(keys[i]), 1);
	}
	/* no slot left: a new key is not held, and the call does not block */
	assert_int_equal(ft_keylock_take("ffffffffffffffff"), 0);
	for (int i = 0; i < FT_KEYLOCK_MAX; i++)
		ft_keylock_give(keys[i]);
	assert_int_equal(ft_keylock_take("ffffffffffffffff"), 1);
	ft_keylock_give("ffffffffffffffff");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_key_waits),
		cmocka_unit_test(test_full_table_holds_nothing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
