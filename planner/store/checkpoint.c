/* WAL checkpoints off the writer's thread (cp_store_set_checkpoints).
 *
 * SQLite's own rule (the default wal_autocheckpoint of 1000 pages) runs a
 * checkpoint inside the commit that takes the WAL past 1000 pages: the
 * copy of the WAL's pages into the database file and two fsyncs (the WAL,
 * then the database), 10-40 ms on the machines this was measured on,
 * during which the committing thread -- the search, or MPI rank 0 -- does
 * nothing else. Here the writer's connection checkpoints nothing itself:
 * its WAL hook (called after each commit with the WAL's size) asks a
 * helper thread, which has its own connection to the file, for a PASSIVE
 * checkpoint once the WAL has grown by `pages` since the last one. A
 * PASSIVE checkpoint never takes the writer's lock, so commits go on while
 * it copies; it copies what was committed when it started.
 *
 * A WAL starts again from its beginning only when a writer begins a
 * transaction with every page of it checkpointed; a writer that commits
 * more often than a checkpoint takes may never see that, and the WAL would
 * grow with the run. So once it holds RESTART_FACTOR x `pages` the helper
 * asks for a RESTART checkpoint, which waits for the writer between two
 * transactions and holds it off while it copies the pages the passive ones
 * left (few) and syncs; the next commit then starts the WAL afresh.
 *
 * Closing the store stops and joins the helper and closes its connection
 * first, so the writer's connection closes last and SQLite checkpoints the
 * whole WAL into the file and removes it, as without the helper. */
#include <pthread.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "models/clock.h"
#include "planner/store/store_impl.h"

/* RESTART_MS bounds how long the helper's RESTART checkpoint waits, under
 * its busy handler, for the writer between two transactions and then for
 * the readers of other connections to leave the WAL; the writer's next
 * commit waits for it meanwhile. A RESTART that cannot finish so (a
 * reader elsewhere keeps an old snapshot) is tried again only once the
 * WAL has grown by another `pages`. */
enum { RESTART_FACTOR = 8, RESTART_MS = 100, WANT_PASSIVE = 1, WANT_RESTART = 2 };

struct cp_store_ckpt {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pthread_t thread;
  int started;        /* the thread exists (joined at close) */
  int stop;
  int want;           /* 0 none, WANT_PASSIVE or WANT_RESTART */
  int running;        /* a checkpoint is under way */
  int broken;         /* the helper could not open its connection */
  int pages;          /* checkpoint when the WAL grew by this many pages */
  int last_log;       /* the WAL's pages when the last checkpoint ended */
  int restart_at;     /* the WAL's pages that call for a RESTART */
  char *file;         /* the database's file name (absolute) */
  cp_store_checkpoint_stats stats;
};

static void *helper(void *arg) {
  struct cp_store_ckpt *c = arg;
  sqlite3 *db = NULL;
  int rc = sqlite3_open_v2(c->file, &db, SQLITE_OPEN_READWRITE, NULL);
  /* Its checkpoints sync as the writer's would (synchronous = NORMAL: the
   * WAL before the copy, the database file after); a read opens the WAL
   * (and may meet the writer restarting it: the busy handler waits). */
  if (!rc) rc = sqlite3_busy_timeout(db, RESTART_MS);
  if (!rc) rc = sqlite3_exec(db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
  if (!rc) rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", NULL, NULL, NULL);
  pthread_mutex_lock(&c->mu);
  if (rc) {
    c->broken = 1; /* the writer checkpoints inline from now on */
    pthread_cond_broadcast(&c->cv);
  }
  while (!c->stop && !c->broken) {
    if (!c->want) {
      pthread_cond_wait(&c->cv, &c->mu);
      continue;
    }
    int mode = c->want;
    c->want = 0;
    c->running = 1;
    pthread_mutex_unlock(&c->mu);
    int log = -1, done = -1;
    double t0 = cp_clock_now(), c0 = cp_clock_thread_cpu();
    rc = sqlite3_wal_checkpoint_v2(db, NULL,
                                   mode == WANT_RESTART
                                       ? SQLITE_CHECKPOINT_RESTART
                                       : SQLITE_CHECKPOINT_PASSIVE,
                                   &log, &done);
    double dt = cp_clock_now() - t0, dc = cp_clock_thread_cpu() - c0;
    pthread_mutex_lock(&c->mu);
    c->running = 0;
    c->stats.seconds += dt;
    c->stats.cpu += dc;
    if (rc == SQLITE_OK) {
      if (mode == WANT_RESTART) ++c->stats.restarts;
      else ++c->stats.passive;
      if (log > c->last_log) c->last_log = log;
      if (log >= 0 && done >= 0) c->stats.copied += done;
    } else {
      ++c->stats.failed; /* busy or an I/O error: asked again later */
    }
    /* The next RESTART once the WAL has grown by `pages` more, unless it
     * starts again before (the WAL hook then resets restart_at). */
    if (mode == WANT_RESTART)
      c->restart_at = (log > 0 ? log : c->restart_at) + c->pages;
    pthread_cond_broadcast(&c->cv);
  }
  pthread_mutex_unlock(&c->mu);
  sqlite3_close(db);
  return NULL;
}

/* After each commit of the writer's connection: pages is the WAL's size. */
static int wal_hook(void *ctx, sqlite3 *db, const char *name, int pages) {
  cp_store *st = ctx;
  struct cp_store_ckpt *c = st->ckpt;
  (void)name;
  pthread_mutex_lock(&c->mu);
  if (pages > c->stats.wal_max) c->stats.wal_max = pages;
  if (pages < c->last_log) { /* the WAL started again */
    c->last_log = 0;
    c->restart_at = RESTART_FACTOR * c->pages;
  }
  int want = 0;
  if (pages >= c->restart_at) want = WANT_RESTART;
  else if (pages - c->last_log >= c->pages) want = WANT_PASSIVE;
  int inline_ckpt = 0;
  if (want && !c->running && want > c->want) {
    if (!c->started && !c->broken) {
      if (pthread_create(&c->thread, NULL, helper, c) == 0) c->started = 1;
      else c->broken = 1;
    }
    if (c->broken) inline_ckpt = 1;
    else {
      c->want = want;
      pthread_cond_signal(&c->cv);
    }
  }
  pthread_mutex_unlock(&c->mu);
  /* No helper: SQLite's own rule, on this connection. */
  if (inline_ckpt && pages >= 1000)
    sqlite3_wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
  return SQLITE_OK;
}

/* Stops and joins the helper (it closes its own connection). */
static void ckpt_free(struct cp_store_ckpt *c) {
  if (!c) return;
  if (c->started) {
    pthread_mutex_lock(&c->mu);
    c->stop = 1;
    pthread_cond_broadcast(&c->cv);
    pthread_mutex_unlock(&c->mu);
    pthread_join(c->thread, NULL);
  }
  pthread_cond_destroy(&c->cv);
  pthread_mutex_destroy(&c->mu);
  free(c->file);
  free(c);
}

void cp_store_checkpoints_end(cp_store *st) {
  if (!st->ckpt) return;
  sqlite3_wal_hook(st->db, NULL, NULL);
  ckpt_free(st->ckpt);
  st->ckpt = NULL;
}

cp_store_status cp_store_set_checkpoints(cp_store *st, int pages) {
  const char *file = sqlite3_db_filename(st->db, "main");
  int wal = file && file[0] && sqlite3_db_readonly(st->db, "main") == 0;
  cp_store_checkpoints_end(st);
  if (!wal) return CP_STORE_OK; /* in memory or read-only: no WAL */
  if (pages <= 0) { /* SQLite's own, inside the commits */
    sqlite3_wal_autocheckpoint(st->db, 1000);
    return CP_STORE_OK;
  }
  struct cp_store_ckpt *c = calloc(1, sizeof *c);
  if (!c || !(c->file = strdup(file))) {
    free(c);
    return cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
  }
  pthread_mutex_init(&c->mu, NULL);
  pthread_cond_init(&c->cv, NULL);
  c->pages = pages;
  c->restart_at = RESTART_FACTOR * pages;
  st->ckpt = c;
  sqlite3_wal_hook(st->db, wal_hook, st); /* replaces wal_autocheckpoint */
  return CP_STORE_OK;
}

void cp_store_checkpoints(cp_store *st, cp_store_checkpoint_stats *out) {
  memset(out, 0, sizeof *out);
  struct cp_store_ckpt *c = st->ckpt;
  if (!c) return;
  pthread_mutex_lock(&c->mu);
  *out = c->stats;
  pthread_mutex_unlock(&c->mu);
}

void cp_store_checkpoint_wait(cp_store *st) {
  struct cp_store_ckpt *c = st->ckpt;
  if (!c) return;
  pthread_mutex_lock(&c->mu);
  while (c->started && !c->broken && (c->want || c->running))
    pthread_cond_wait(&c->cv, &c->mu);
  pthread_mutex_unlock(&c->mu);
}
