/* cmd_trace: BOOTSTRAP placeholder, replaced by the workloads work. */
#include "sim/commands.h"
static int run(const struct cli_cmd *self, int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage(self, "not built yet"); }
static const struct cli_opt opts[] = {CLI_HELP_OPT, {0}};
const struct cli_cmd cmd_trace = {"trace", "bucketsim trace", "synthesize or inspect traces", NULL, NULL, opts, run};
