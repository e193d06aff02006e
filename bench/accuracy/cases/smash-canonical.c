// set: tuned
// expect: stack-buffer-overflow greet
/* Greets a user by the name on its command line, copied into a fixed buffer. */
#include <stdio.h>
#include <string.h>

static void greet(const char *name)
{
    char buf[16];
    strcpy(buf, name);
    printf("hello %s\n", buf);
} // CULPRIT

int main(int argc, char **argv)
{
    greet(argc > 1 ? argv[1] : "AAAAAAAAAAAAAAAAAAAAAAAABBBBBB");
    return 0;
}
