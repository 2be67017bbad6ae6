/* The table-driven flag parser (planner/cli/flags.h, cp_cli_parse): every kind of
 * flag stored from both spellings, every usage error with its message, the
 * --help text made from the table; then each command's table through the
 * executable (unknown flags, missing values, bool flags given a value). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/cli/flags.h"
#include "tests/support.h"

/* The variables of the test table, reset before every parse. */
static int b, n, e;
static long l;
static uint64_t u;
static double d;
static const char *s, *p, *operand;
static const char *const colours[] = {"red", "green", "blue", NULL};

static const cp_cli_flag table[] = {
    CP_CLI_BOOL("--flag", &b, "a switch"),
    {"--n", "N", CP_FLAG_INT, &n, "an int", .imin = 1, .imax = 10},
    {"--long", "L", CP_FLAG_LONG, &l, "a long\nover two lines", .imin = -5,
     .imax = 5000000000L},
    CP_CLI_VALUE("--u", "S", CP_FLAG_U64, &u, "a seed"),
    {"--d", "X", CP_FLAG_DOUBLE, &d, "a double", .dmin = -2, .dmax = 2,
     .expect = "a number from -2 to 2"},
    {"--colour", "C", CP_FLAG_ENUM, &e, "red | green | blue", .names = colours},
    CP_CLI_VALUE("--s", "TEXT", CP_FLAG_STRING, &s, "any text"),
    CP_CLI_VALUE("--p", "FILE", CP_FLAG_PATH, &p, "a file"),
    {"--only-two", NULL, CP_FLAG_BOOL, &b, "mode 2 only", .modes = 2},
};

static cp_cli_spec spec(const char *opd, unsigned mode) {
  cp_cli_spec sp = {"test", "usage: complan test X\n\n", "\nthe end\n", opd,
                    opd ? &operand : NULL, table, sizeof table / sizeof *table, mode, NULL};
  return sp;
}

/* Runs cp_cli_parse on the NULL-terminated args (argv[0] is "test") with
 * stdout and stderr captured; *err gets stderr (malloc'd). */
static int parse(const cp_cli_spec *sp, const char *const *args, char **err) {
  b = n = e = 0;
  l = 0;
  u = 0;
  d = 0;
  s = p = operand = NULL;
  int argc = 0;
  while (args[argc]) argc++;
  char path[] = "/tmp/cpflagsXXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  unlink(path);
  fflush(stdout);
  fflush(stderr);
  int saved_err = dup(2), saved_out = dup(1);
  dup2(fd, 2);
  dup2(fd, 1);
  int rc = cp_cli_parse(sp, argc, (char **)args);
  fflush(stdout);
  fflush(stderr);
  dup2(saved_err, 2);
  dup2(saved_out, 1);
  close(saved_err);
  close(saved_out);
  off_t size = lseek(fd, 0, SEEK_END);
  char *text = calloc((size_t)size + 1, 1);
  cr_assert(pread(fd, text, (size_t)size, 0) == size);
  close(fd);
  if (err) *err = text;
  else free(text);
  return rc;
}

Test(cli_flags, every_kind_is_stored) {
  cp_cli_spec sp = spec("X", 1);
  const char *a[] = {"test",   "--flag",        "--n=7",    "--long",  "-3",    "--u",
                     "18446744073709551615",    "--d",      "-1.5e0",  "--colour=blue",
                     "--s",    "",              "--p=out.csv", "in.json", NULL};
  char *err;
  cr_assert_eq(parse(&sp, a, &err), CP_CLI_GO, "%s", err);
  cr_assert_str_empty(err);
  cr_assert_eq(b, 1);
  cr_assert_eq(n, 7);
  cr_assert_eq(l, -3);
  cr_assert_eq(u, UINT64_MAX);
  cr_assert_eq(d, -1.5); // a value may start with '-'
  cr_assert_eq(e, 2);
  cr_assert_str_eq(s, ""); // a string may be empty, a path may not
  cr_assert_str_eq(p, "out.csv");
  cr_assert_str_eq(operand, "in.json");
  free(err);
  /* the upper end of a long range beyond int */
  const char *a2[] = {"test", "x", "--long", "5000000000", NULL};
  cr_assert_eq(parse(&sp, a2, NULL), CP_CLI_GO);
  cr_assert_eq(l, 5000000000L);
  /* repeated value flags other than paths: the last counts */
  const char *a3[] = {"test", "x", "--n", "2", "--n", "9", NULL};
  cr_assert_eq(parse(&sp, a3, NULL), CP_CLI_GO);
  cr_assert_eq(n, 9);
  /* "-" is an operand */
  const char *a4[] = {"test", "-", NULL};
  cr_assert_eq(parse(&sp, a4, NULL), CP_CLI_GO);
  cr_assert_str_eq(operand, "-");
}

/* Each bad command line: exit 2 and the message, then the --help pointer. */
Test(cli_flags, usage_errors_name_the_flag) {
  cp_cli_spec sp = spec("SCENE", 1);
  static const struct {
    const char *args[6];
    const char *msg;
  } cases[] = {
      {{"test", "x", "--nope"}, "unknown option '--nope'"},
      {{"test", "x", "--fla"}, "unknown option '--fla'"}, // no prefix matching
      {{"test", "x", "--flagx"}, "unknown option '--flagx'"},
      {{"test", "x", "--only-two"}, "unknown option '--only-two'"}, // other mode
      {{"test", "x", "--flag=1"}, "--flag takes no value, found '--flag=1'"},
      {{"test", "x", "--n"}, "--n needs a value: a whole number from 1 to 10"},
      {{"test", "x", "--n", "11"}, "--n: expected a whole number from 1 to 10, found '11'"},
      {{"test", "x", "--n", "0x5"}, "--n: expected a whole number from 1 to 10, found '0x5'"},
      {{"test", "x", "--n", " 5"}, "--n: expected a whole number from 1 to 10, found ' 5'"},
      {{"test", "x", "--long", "5000000001"}, "--long: expected a whole number from -5 to 5000000000"},
      {{"test", "x", "--u", "-1"}, "--u: expected a whole number from 0 to 18446744073709551615, found '-1'"},
      {{"test", "x", "--u", "18446744073709551616"}, "found '18446744073709551616'"},
      {{"test", "x", "--d", "nan"}, "--d: expected a number from -2 to 2, found 'nan'"},
      {{"test", "x", "--d", "2.0001"}, "--d: expected a number from -2 to 2, found '2.0001'"},
      {{"test", "x", "--colour", "Red"}, "--colour: expected red, green or blue, found 'Red'"},
      {{"test", "x", "--p", ""}, "--p: expected a file name, found ''"},
      {{"test", "x", "--p", "a", "--p=b"}, "--p given twice (second: 'b')"},
      {{"test", "x", "y"}, "one SCENE expected, found a second: 'y'"},
      {{"test", "--flag"}, "missing SCENE"},
      {{"test", "x", "--nope", "--help"}, "unknown option '--nope'"}, // in order
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char *err;
    cr_assert_eq(parse(&sp, cases[k].args, &err), 2, "case %zu", k);
    cr_assert(strstr(err, "complan: ") == err, "case %zu: %s", k, err);
    cr_assert(strstr(err, cases[k].msg), "case %zu: '%s' lacks '%s'", k, err, cases[k].msg);
    cr_assert(strstr(err, "(see 'complan test --help')"), "case %zu: %s", k, err);
    free(err);
  }
  /* no operand in the spec: any word is unexpected */
  cp_cli_spec none = spec(NULL, 1);
  const char *a[] = {"test", "--flag", "word", NULL};
  char *err;
  cr_assert_eq(parse(&none, a, &err), 2);
  cr_assert(strstr(err, "unexpected argument 'word'"), "%s", err);
  free(err);
  const char *ok[] = {"test", "--flag", NULL};
  cr_assert_eq(parse(&none, ok, NULL), CP_CLI_GO);
  /* the mode 2 flag exists in mode 2 */
  cp_cli_spec two = spec(NULL, 2);
  const char *a2[] = {"test", "--only-two", NULL};
  cr_assert_eq(parse(&two, a2, NULL), CP_CLI_GO);
  cr_assert_eq(b, 1);
}

/* --help: head, one line per active flag at a common column (two spaces
 * past the longest "--name ARG", at least 20), continuation lines indented
 * to it, -h last, tail; exit 0 before any later argument is looked at. */
Test(cli_flags, help_from_the_table) {
  const char *want =
      "usage: complan test X\n"
      "\n"
      "  --flag            a switch\n"
      "  --n N             an int\n"
      "  --long L          a long\n"
      "                    over two lines\n"
      "  --u S             a seed\n"
      "  --d X             a double\n"
      "  --colour C        red | green | blue\n"
      "  --s TEXT          any text\n"
      "  --p FILE          a file\n"
      "  -h, --help        this text\n"
      "\n"
      "the end\n";
  cp_cli_spec sp = spec("X", 1);
  const char *a[] = {"test", "--n", "3", "-h", "--nope", NULL};
  char *out;
  cr_assert_eq(parse(&sp, a, &out), 0);
  cr_assert_str_eq(out, want);
  free(out);
  /* mode 2 lists its own flag */
  cp_cli_spec two = spec("X", 2);
  const char *h[] = {"test", "--help", NULL};
  cr_assert_eq(parse(&two, h, &out), 0);
  cr_assert(strstr(out, "  --only-two        mode 2 only\n"), "%s", out);
  free(out);
}

/* Every command through the executable: its table answers --help with each
 * of its flags, and the parser's errors name the command's --help. */
Test(cli_flags, every_command) {
  static const struct {
    const char *cmd[3];
    const char *value_flag, *bool_flag;
  } cmds[] = {
      {{"solve"}, "--solver", "--json"},
      {{"contacts"}, NULL, "--no-speed-check"},
      {{"simulate"}, "--dt", "--no-warm-start"},
      {{"plan"}, "--db", "--resume"},
      {{"plans"}, "--db", "--json"},
      {{"replay"}, "--plan", "--verify"},
      {{"stability"}, "--time-limit", "--progress"},
      {{"assemble"}, "--directions", "--no-db"},
      {{"lcp", "solve"}, "--tol", "--verbose"},
      {{"lcp", "certify"}, "--max-cuts", "--second"},
      {{"experiment", "paper"}, "--jobs", "--mip-all"},
  };
  for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
    const char *argv[8] = {"complan"};
    int c = 1;
    for (int j = 0; j < 3 && cmds[k].cmd[j]; j++) argv[c++] = cmds[k].cmd[j];
    char name[64], see[96];
    snprintf(name, sizeof name, "%s%s%s", argv[1], c > 2 ? " " : "", c > 2 ? argv[2] : "");
    snprintf(see, sizeof see, "(see 'complan %s --help')", name);
    char *out, *err;
    argv[c] = "--help";
    cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", name);
    cr_assert(strstr(out, "usage: complan "), "%s: %s", name, out);
    cr_assert(strstr(out, "  -h, --help        this text\n"), "%s: %s", name, out);
    cr_assert(strstr(out, cmds[k].bool_flag), "%s: %s", name, out);
    if (cmds[k].value_flag) cr_assert(strstr(out, cmds[k].value_flag), "%s: %s", name, out);
    free(out);
    free(err);
    argv[c] = "--frobnicate";
    cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", name);
    cr_assert_str_empty(out);
    cr_assert(strstr(err, "unknown option '--frobnicate'"), "%s: %s", name, err);
    cr_assert(strstr(err, see), "%s: %s", name, err);
    free(out);
    free(err);
    char withval[64];
    snprintf(withval, sizeof withval, "%s=yes", cmds[k].bool_flag);
    argv[c] = withval;
    cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", name);
    cr_assert(strstr(err, "takes no value"), "%s: %s", name, err);
    free(out);
    free(err);
    if (!cmds[k].value_flag) continue;
    argv[c] = cmds[k].value_flag; // last: its value is missing
    cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", name);
    char needs[64];
    snprintf(needs, sizeof needs, "%s needs a value", cmds[k].value_flag);
    cr_assert(strstr(err, needs), "%s: %s", name, err);
    free(out);
    free(err);
  }
}

/* The command table (planner/cli/commands.h) is the one source of the
 * command list, `complan help CMD` and the usage of an incomplete command
 * line: every command is listed once with its operand, `help CMD` prints
 * exactly `CMD --help`, and a group alone prints its commands' usage lines
 * (stderr, exit 2; stdout, exit 0 with --help or through `help`). */
Test(cli_flags, command_table) {
  static const char *const names[][2] = {
      {"solve", "SCENE"},   {"contacts", "SCENE"},   {"simulate", "SCENE"},
      {"lcp solve", "FILE"}, {"lcp certify", "FILE"}, {"experiment paper", ""},
      {"plan", "TASK"},     {"plans", ""},           {"replay", ""},
      {"stability", "SCENE"}, {"assemble", "SCENE"},
  };
  char *top, *err;
  const char *h[] = {"complan", "--help", NULL};
  cr_assert_eq(cpt_run(h, &top, &err), 0);
  free(err);
  const char *bare[] = {"complan", NULL};
  char *out;
  cr_assert_eq(cpt_run(bare, &out, &err), 2);
  cr_assert_str_empty(out);
  cr_assert_str_eq(err, top, "'complan' alone: the list on stderr");
  free(out);
  free(err);
  const char *word[] = {"complan", "help", NULL};
  cr_assert_eq(cpt_run(word, &out, &err), 0);
  cr_assert_str_eq(out, top);
  free(out);
  free(err);
  const char *prev = top;
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    char line[96];
    snprintf(line, sizeof line, "\n  %s%s%s ", names[k][0], *names[k][1] ? " " : "",
             names[k][1]);
    const char *at = strstr(top, line);
    cr_assert(at, "'%s' not listed:\n%s", line + 1, top);
    cr_assert(at > prev, "'%s' out of order", names[k][0]);
    cr_assert_null(strstr(at + 1, line), "'%s' listed twice", names[k][0]);
    prev = at;
    /* help CMD == CMD --help, word for word */
    char buf[64];
    snprintf(buf, sizeof buf, "%s", names[k][0]);
    char *sub = strchr(buf, ' ');
    if (sub) *sub++ = '\0';
    const char *a[] = {"complan", buf, sub ? sub : "--help", sub ? "--help" : NULL, NULL};
    const char *b[] = {"complan", "help", buf, sub, NULL};
    char *o1, *o2, *e1, *e2;
    cr_assert_eq(cpt_run(a, &o1, &e1), 0, "%s --help", names[k][0]);
    cr_assert_eq(cpt_run(b, &o2, &e2), 0, "help %s", names[k][0]);
    cr_assert_str_eq(o1, o2, "help %s differs from --help", names[k][0]);
    char usage[96];
    snprintf(usage, sizeof usage, "usage: complan %s", names[k][0]);
    cr_assert(!strncmp(o1, usage, strlen(usage)), "%s", o1);
    free(o1);
    free(o2);
    free(e1);
    free(e2);
  }
  free(top);
  /* A group alone: its commands' usage lines, on stderr with exit 2. */
  const char *lcp[] = {"complan", "lcp", NULL};
  cr_assert_eq(cpt_run(lcp, &out, &err), 2);
  cr_assert_str_empty(out);
  const char *lines = "usage: complan lcp solve FILE [options]\n"
                      "       complan lcp certify FILE [--second] [options]\n\n";
  cr_assert(!strncmp(err, lines, strlen(lines)), "%s", err);
  char *group = err;
  free(out);
  const char *lcph[] = {"complan", "help", "lcp", NULL};
  cr_assert_eq(cpt_run(lcph, &out, &err), 0);
  cr_assert_str_eq(out, group);
  free(out);
  free(err);
  free(group);
  const char *bad[][5] = {{"complan", "help", "nonsense", NULL},
                          {"complan", "lcp", "frobnicate", NULL},
                          {"complan", "experiment", "nonsense", NULL},
                          {"complan", "help", "plan", "x", "y"}};
  const char *msg[] = {"unknown command 'nonsense'\n(see 'complan --help')",
                       "unknown lcp command 'frobnicate' (expected solve or certify)\n"
                       "(see 'complan lcp --help')",
                       "unknown experiment command 'nonsense' (expected paper)",
                       "help takes a command, found 'y'"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    const char *argv[6] = {0};
    memcpy(argv, bad[k], sizeof bad[k]);
    cr_assert_eq(cpt_run(argv, &out, &err), 2, "case %zu", k);
    cr_assert_str_empty(out);
    cr_assert(strstr(err, msg[k]), "case %zu: %s", k, err);
    free(out);
    free(err);
  }
}
