// set: tuned
// expect: heap-corruption close_session
/* A session keeps its client name in a small block and its message log in the next one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session { char *name; char *log; };

static void set_name(struct session *session, const char *name)
{
    strcpy(session->name, name);
}

static void close_session(struct session *session)
{
    free(session->log); // CULPRIT
    free(session->name);
}

int main(int argc, char **argv)
{
    struct session session = { malloc(24), malloc(2000) };
    memset(session.log, 0, 2000);
    set_name(&session, argc > 1 ? argv[1] : "client-name-with-paddingAAAAAAAA");
    close_session(&session);
    return 0;
}
