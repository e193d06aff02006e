// set: held-out
// expect: invalid-memory-access parse_route
/* Splits a route on '/', with strtok, which writes into the string it is given. */
#include <stdio.h>
#include <string.h>

static int parse_route(char *route, const char *parts[], int max)
{
    int n = 0;
    for (char *part = strtok(route, "/"); part && n < max; part = strtok(NULL, "/")) // CULPRIT
        parts[n++] = part;
    return n;
}

int main(void)
{
    const char *parts[8];
    int n = parse_route((char *)"/api/v1/users", parts, 8);
    printf("%d parts\n", n);
    return 0;
}
