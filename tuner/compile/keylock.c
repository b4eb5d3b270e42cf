/* keylock.c - one compile per CUBIN key at a time (see keylock.h). */
#include "compile/keylock.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t lock_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t lock_c = PTHREAD_COND_INITIALIZER;
static char held[FT_KEYLOCK_MAX][17];	/* "" = free slot */

static int find(const char *key)
{
	for (int i = 0; i < FT_KEYLOCK_MAX; i++)
		if (held[i][0] && !strncmp(held[i], key, 16))
			return i;
	return -1;
}

int ft_keylock_take(const char *key)
{
	int slot = -1;

	pthread_mutex_lock(&lock_m);
	while (find(key) >= 0)
		pthread_cond_wait(&lock_c, &lock_m);
	for (int i = 0; i < FT_KEYLOCK_MAX && slot < 0; i++)
		if (!held[i][0])
			slot = i;
	if (slot >= 0) {
		memcpy(held[slot], key, 16);
		held[slot][16] = '\0';
	}
	pthread_mutex_unlock(&lock_m);
	return slot >= 0;
}

void ft_keylock_give(const char *key)
{
	int i;

	pthread_mutex_lock(&lock_m);
	i = find(key);
	if (i >= 0)
		held[i][0] = '\0';
	pthread_cond_broadcast(&lock_c);
	pthread_mutex_unlock(&lock_m);
}
