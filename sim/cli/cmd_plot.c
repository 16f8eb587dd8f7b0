#include "cli.h"
int cli_plot(int argc, char **argv) { (void)argc; (void)argv; return 2; }
