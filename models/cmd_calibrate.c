/* cmd_calibrate: BOOTSTRAP placeholder, replaced by the cost-model work. */
#include "sim/commands.h"
static int run(const struct cli_cmd *self, int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage(self, "not built yet"); }
static const struct cli_opt opts[] = {CLI_HELP_OPT, {0}};
const struct cli_cmd cmd_calibrate = {"calibrate", "bucketsim calibrate", "fit the cost model", NULL, NULL, opts, run};
