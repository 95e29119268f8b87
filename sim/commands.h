/*
 * commands: every subcommand's table entry, each defined in the file named beside it.
 */
#ifndef BS_COMMANDS_H
#define BS_COMMANDS_H

#include "sim/cli.h"

extern const struct cli_cmd cmd_run;        /* sim/cmd_run.c */
extern const struct cli_cmd cmd_validate;   /* sim/cmd_run.c */
extern const struct cli_cmd cmd_sweep;      /* sim/cmd_sweep.c */
extern const struct cli_cmd cmd_capacity;   /* sim/cmd_capacity.c */
extern const struct cli_cmd cmd_plot;       /* sim/cmd_plot.c */
extern const struct cli_cmd cmd_list;       /* sim/cmd_list.c */
extern const struct cli_cmd cmd_buckets;    /* sim/cmd_buckets.c */
extern const struct cli_cmd cmd_predict;    /* sim/cmd_predict.c */
extern const struct cli_cmd cmd_calibrate;  /* sim/cmd_calibrate.c */
extern const struct cli_cmd cmd_trace;      /* sim/cmd_trace.c */

/* argv[0] of main(), as the program was started (sweep runs its points with it). */
extern const char *bs_argv0;                /* sim/cmd_sweep.c */

#define BUCKETSIM_VERSION "0.1.0"

#endif
