/* The small scene of the task tests (test_task.c, test_goals.c): a box on a
 * table and a finger of two joints, "finger/j1" (prismatic along x) and
 * "finger/j2" (revolute about z). */
#ifndef CP_TESTS_FINGER_SCENE_H
#define CP_TESTS_FINGER_SCENE_H

#define SCENE                                                                 \
  "{\"bodies\": ["                                                            \
  " {\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\","  \
  "  \"normal\": [0, 0, 1], \"offset\": 0}},"                                 \
  " {\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\","          \
  "  \"size\": [0.1, 0.1, 0.1]}, \"position\": [0, 0, 0.05]}],"               \
  " \"manipulators\": [{\"name\": \"finger\", \"base\": {\"position\":"       \
  "  [-0.3, 0, 0.05]}, \"joints\": ["                                         \
  "  {\"name\": \"j1\", \"type\": \"prismatic\", \"axis\": [1, 0, 0],"        \
  "   \"link\": {\"name\": \"a\", \"mass\": 0.1, \"shape\": {\"type\":"       \
  "   \"box\", \"size\": [0.1, 0.01, 0.01]}}},"                               \
  "  {\"name\": \"j2\", \"type\": \"revolute\", \"axis\": [0, 0, 1],"         \
  "   \"link\": {\"name\": \"b\", \"mass\": 0.1, \"shape\": {\"type\":"       \
  "   \"box\", \"size\": [0.1, 0.01, 0.01]}}}]}]}"

#endif
