/* Task keys of the "search" object beyond task.c (planner/search/
 * task_keys.h). */
#include "planner/search/task_keys.h"

#include "models/jsonread.h"
#include "planner/search/search.h"

int cp_task_parse_search_keys(cp_task *t, const json_t *v, cp_error *err) {
  if (cp_task_parse_steer(t, v, err)) return -1;
  const json_t *x = json_object_get(v, "goal_k");
  if (x) {
    if (!json_is_integer(x) || json_integer_value(x) < 0 ||
        json_integer_value(x) > CP_SEARCH_MAX_GOAL_K)
      return cp_error_set(err, "search.goal_k",
                          "expected an integer in [0, %d] (rrt: a goal "
                          "sample grows from one of this many nearest "
                          "nodes; 0 or 1: the nearest)", CP_SEARCH_MAX_GOAL_K);
    t->goal_k = (long)json_integer_value(x); /* rrt's; others ignore it */
  }
  if ((x = json_object_get(v, "drop_rejected"))) {
    if (!json_is_boolean(x))
      return cp_error_set(err, "search.drop_rejected",
                          "expected true or false (rrt: a node an iteration "
                          "from which kept no candidate leaves the tree)");
    t->drop_rejected = json_is_true(x); /* rrt's; others ignore it */
  }
  if ((x = json_object_get(v, "fresh_actions"))) {
    if (!json_is_boolean(x))
      return cp_error_set(err, "search.fresh_actions",
                          "expected true or false (rrt and sst: never "
                          "simulate a node's action twice)");
    if (json_is_true(x) && t->continuous)
      return cp_error_set(err, "search.fresh_actions",
                          "true goes with sampling \"grid\" (continuous "
                          "sampling does not repeat actions): expected false "
                          "or no key");
    t->search_fresh_actions = json_is_true(x);
  }
  x = json_object_get(v, "connect");
  if (!x) return 0;
  if (!json_is_integer(x) || json_integer_value(x) < 0 ||
      json_integer_value(x) > 1000)
    return cp_error_set(err, "search.connect",
                        "expected an integer in [0, 1000] (greedy "
                        "extensions after a goal sample; 0: none)");
  t->connect = (long)json_integer_value(x); /* rrt's; other planners ignore it */
  return 0;
}
