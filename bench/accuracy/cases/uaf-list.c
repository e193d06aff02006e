// set: held-out
// expect: invalid-memory-access main
/* A connection list: closing a connection frees its node but leaves it linked. */
#include <stdio.h>
#include <stdlib.h>

struct conn { struct conn *next; int fd; int active; char pad[40]; };

static struct conn *open_conns(int n)
{
    struct conn *head = NULL;
    for (int i = 0; i < n; i++) {
        struct conn *c = calloc(1, sizeof *c);
        c->fd = 100 + i;
        c->active = 1;
        c->next = head;
        head = c;
    }
    return head;
}

static void close_conn(struct conn *c)
{
    c->active = 0;
    free(c);
}

static int count_active(const struct conn *head)
{
    int n = 0;
    for (const struct conn *c = head; c; c = c->next)
        n += c->active;
    return n;
}

int main(void)
{
    struct conn *head = open_conns(8);
    for (struct conn *c = head; c; c = c->next)
        if (c->fd % 2 == 0) close_conn(c); // CULPRIT: the loop reads c->next from the node it just freed
    printf("%d active\n", count_active(head));
    return 0;
}
