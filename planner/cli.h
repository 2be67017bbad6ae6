#ifndef CP_PLANNER_CLI_H
#define CP_PLANNER_CLI_H
int cp_cli_main(int argc, char **argv);
#endif
