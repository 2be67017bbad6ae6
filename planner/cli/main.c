#include "planner/cli/cli.h"
int main(int argc, char **argv) { return cp_cli_main(argc, argv); }
