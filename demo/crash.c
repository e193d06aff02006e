/* A tiny chat server's event loop, replayed from a recorded session so that it crashes the
 * same way every run: when a client disconnects, its connection stays in the room with its
 * client set to NULL, and the next broadcast to the room dereferences it.
 *
 * Build and run (the kernel writes ./core when core dumps are enabled):
 *   gcc -g -O0 -o demo/build/chat-server demo/crash.c
 *   (ulimit -c unlimited; cd demo/build && ./chat-server)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MEMBERS 8

struct client {
    char nick[16];
    char outbox[256];
    size_t outbox_used;
};

struct connection {
    int fd;
    struct client *client; /* NULL once the peer has hung up */
};

struct room {
    char name[16];
    struct connection *members[MAX_MEMBERS];
    int member_count;
};

enum event_kind { EVENT_JOIN, EVENT_MESSAGE, EVENT_HANGUP };

struct event {
    enum event_kind kind;
    int fd;
    const char *text;
};

static struct connection *connection_open(int fd, const char *nick)
{
    struct connection *conn = calloc(1, sizeof *conn);
    conn->fd = fd;
    conn->client = calloc(1, sizeof *conn->client);
    snprintf(conn->client->nick, sizeof conn->client->nick, "%s", nick);
    return conn;
}

static void connection_hangup(struct connection *conn)
{
    printf("fd %d (%s) hung up\n", conn->fd, conn->client->nick);
    free(conn->client);
    conn->client = NULL; /* but the room still lists this connection */
}

static void queue_message(struct connection *conn, const char *text)
{
    struct client *client = conn->client;
    size_t length = strlen(text);
    if (client->outbox_used + length < sizeof client->outbox) { // CULPRIT
        memcpy(client->outbox + client->outbox_used, text, length);
        client->outbox_used += length;
    }
}

static void room_broadcast(struct room *room, const char *text)
{
    for (int i = 0; i < room->member_count; i++)
        queue_message(room->members[i], text);
}

static struct connection *room_find(struct room *room, int fd)
{
    for (int i = 0; i < room->member_count; i++)
        if (room->members[i]->fd == fd)
            return room->members[i];
    return NULL;
}

static void handle_event(struct room *room, const struct event *event)
{
    switch (event->kind) {
    case EVENT_JOIN:
        room->members[room->member_count++] = connection_open(event->fd, event->text);
        break;
    case EVENT_MESSAGE:
        room_broadcast(room, event->text);
        break;
    case EVENT_HANGUP:
        connection_hangup(room_find(room, event->fd));
        break;
    }
}

int main(void)
{
    static const struct event session[] = {
        { EVENT_JOIN, 4, "ada" },          { EVENT_JOIN, 5, "linus" },
        { EVENT_MESSAGE, 4, "hi all\n" },  { EVENT_JOIN, 6, "grace" },
        { EVENT_HANGUP, 5, NULL },         { EVENT_MESSAGE, 6, "where did linus go?\n" },
    };
    struct room room = { .name = "#general" };
    for (size_t i = 0; i < sizeof session / sizeof session[0]; i++)
        handle_event(&room, &session[i]);
    printf("%d members, all messages delivered\n", room.member_count);
    return 0;
}
