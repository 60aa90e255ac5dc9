/*  tools/client.h: the `shoal` subcommands that talk to a running node. */
#ifndef SHOAL_CLIENT_H
#define SHOAL_CLIENT_H

//  Runs the subcommand name with its arguments (after the name). Returns
//  the exit status, or -1 when name is not a client subcommand.
int shoal_client_main (const char *name, int argc, char **argv);

#endif
