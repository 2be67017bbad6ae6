/* `complan plans [--db FILE] [--json]`: the search runs and plans stored in
 * a database (docs/planner.md, docs/database.md). Thin: planner/store/store.h reads them. */
#include <stdio.h>
#include <string.h>

#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"
#include "planner/store/store.h"

static const char head[] =
    "List the search runs in a planner database (docs/database.md) and the\n"
    "plans each found: run id, task, planner, its batches (search.batch:\n"
    "1; B plain; 2x4 pipelined in halves of 4, 8 in flight), status, seed,\n"
    "nodes, expansions, LCP solves, search time; plan id, final node, cost\n"
    "and length (actions). The database is opened read-only.\n"
    "\n";
static const char tail[] =
    "\n"
    "exit status: 0 listed; 1 the database could not be read (busy, I/O);\n"
    "2 bad usage, no such file, or not a complan database.\n";

int cp_cli_plans(const cp_cli_command *cmd, int argc, char **argv) {
  const char *db = "complan.sqlite";
  int json = 0;
  const cp_cli_flag flags[] = {
      CP_CLI_VALUE("--db", "FILE", CP_FLAG_PATH, &db, "database (default complan.sqlite)"),
      CP_CLI_BOOL("--json", &json,
                  "print one JSON document: {\"runs\": [{\"id\",\n"
                  "\"task_id\", \"task_hash\", \"task_path\", \"planner\",\n"
                  "\"search_batch\", \"search_pipeline\",\n"
                  "\"search_fresh_actions\", \"status\",\n"
                  "\"seed\", \"seconds\", \"nodes\",\n"
                  "\"expansions\", \"lcp_solves\", \"plans\": [{\"id\",\n"
                  "\"node\", \"cost\", \"length\", \"duration\"}]}]}"),
  };
  const cp_cli_spec spec = {cmd->name, head, tail, NULL, NULL, flags, sizeof flags / sizeof *flags, 0, cmd->usage};
  int prc = cp_cli_parse(&spec, argc, argv);
  if (prc != CP_CLI_GO) return prc;
  cp_store *st;
  int rc = cp_cli_open_store(db, 1, &st);
  if (rc) return rc;
  json_t *doc;
  cp_store_status s = cp_store_list(st, &doc);
  if (s != CP_STORE_OK) {
    fprintf(stderr, "complan: %s\n", cp_store_message(st));
    cp_store_close(st);
    return s == CP_STORE_BAD_FILE ? CP_EXIT_BAD_INPUT : CP_EXIT_UNDECIDED;
  }
  cp_store_close(st);
  rc = CP_EXIT_ANSWERED;
  if (json) {
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
  } else {
    json_t *runs = json_object_get(doc, "runs");
    printf("%s: %zu run%s\n", db, json_array_size(runs),
           json_array_size(runs) == 1 ? "" : "s");
    printf("  %4s %-6s %-7s %-10s %6s %8s %10s %12s %9s  %s\n", "run",
           "method", "batches", "status", "seed", "nodes", "expansions",
           "lcp solves", "time (s)", "task");
    size_t i, j;
    json_t *r, *p;
    json_array_foreach(runs, i, r) {
      char batches[32]; /* 2x8: pipelined halves of 8 */
      snprintf(batches, sizeof batches, "%s%lld",
               json_is_true(json_object_get(r, "search_pipeline")) ? "2x" : "",
               json_integer_value(json_object_get(r, "search_batch")));
      printf("  %4lld %-6s %-7s %-10s %6lld %8lld %10lld %12lld %9.2f  %s\n",
             json_integer_value(json_object_get(r, "id")),
             json_string_value(json_object_get(r, "planner")), batches,
             json_string_value(json_object_get(r, "status")),
             json_integer_value(json_object_get(r, "seed")),
             json_integer_value(json_object_get(r, "nodes")),
             json_integer_value(json_object_get(r, "expansions")),
             json_integer_value(json_object_get(r, "lcp_solves")),
             json_real_value(json_object_get(r, "seconds")),
             json_string_value(json_object_get(r, "task_path")));
      json_array_foreach(json_object_get(r, "plans"), j, p) {
        printf("       plan %lld: node %lld, cost %.6g, %lld actions, %.3g s\n",
               json_integer_value(json_object_get(p, "id")),
               json_integer_value(json_object_get(p, "node")),
               json_real_value(json_object_get(p, "cost")),
               json_integer_value(json_object_get(p, "length")),
               json_real_value(json_object_get(p, "duration")));
      }
    }
  }
  json_decref(doc);
  return rc;
}
