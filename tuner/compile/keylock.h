/* keylock.h - one compile per CUBIN key at a time, across every pipeline of
 * the process.
 *
 * A campaign runs a prefetch (search/prefetch.h) beside the next search: both
 * take candidates in the same promise order, so the search's first look-ups
 * may name CUBINs whose compiles the prefetch has started but not finished.
 * A compile thread takes its key's lock before looking in the cache: while
 * another thread holds it, it waits (at most one compile's time), then finds
 * that compile's CUBIN as a hit instead of compiling it a second time. Within
 * one pipeline run its own claim already parks duplicates; this covers two
 * runs at once. A thread holds at most one key, so waits cannot cycle.
 */
#ifndef FT_KEYLOCK_H
#define FT_KEYLOCK_H

/* Keys held at once, at most; past it a key is not locked (the compile runs
 * unguarded, a duplicate at worst: the cache's stores are atomic). */
#define FT_KEYLOCK_MAX 256

/* Waits while another thread holds key (16 hex digits), then holds it.
 * Returns 1 when held (give it back with ft_keylock_give), 0 when the table
 * is full and nothing is held. */
int ft_keylock_take(const char *key);

/* Gives back a key taken by ft_keylock_take (returned 1) and wakes its
 * waiters. */
void ft_keylock_give(const char *key);

#endif
