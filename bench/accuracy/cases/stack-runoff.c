// set: tuned
// expect: stack-buffer-overflow read_header
// flags: -g -O2 -fno-stack-protector
/* Reads the first header line of a request into a fixed buffer, stopping only at a newline. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static size_t read_header(const char *request, char *name_out)
{
    char line[128];
    size_t length = 0;
    while (request[length] != '\n' && request[length] != '\0') {
        line[length] = request[length]; // CULPRIT
        length++;
    }
    line[length] = '\0';
    strncpy(name_out, line, 31);
    return length;
}

int main(void)
{
    size_t size = 1 << 20;
    char *request = malloc(size);
    memset(request, 'x', size - 1);
    request[size - 1] = '\0';
    char name[32];
    printf("%zu\n", read_header(request, name));
    return 0;
}
