/* cmd_run: skeleton (the kernel work fills it in). */
#include "sim/commands.h"
static int run(const struct cli_cmd *self, int argc, char **argv)
{ (void)argc; (void)argv; return cli_usage(self, "not built yet"); }
static const struct cli_opt opts[] = {CLI_HELP_OPT, {0}};
const struct cli_cmd cmd_run = {"run", "bucketsim run", "run one simulation", NULL, NULL, opts, run};
const struct cli_cmd cmd_validate = {"validate", "bucketsim validate", "check a config", NULL, NULL, opts, run};
