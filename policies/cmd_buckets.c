/* cmd_buckets: BOOTSTRAP placeholder, replaced by the bucketing work. */
#include "sim/commands.h"
static int run(const struct cli_cmd *self, int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage(self, "not built yet"); }
static const struct cli_opt opts[] = {CLI_HELP_OPT, {0}};
const struct cli_cmd cmd_buckets = {"buckets", "bucketsim buckets", "print bucket lists", NULL, NULL, opts, run};
