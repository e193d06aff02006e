// set: held-out
// expect: division-by-zero scale_reading
/* Normalises a sensor reading by a divisor taken from the device, which may be -1. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

static int scale_reading(int raw, int divisor)
{
    return raw / divisor; // CULPRIT
}

int main(int argc, char **argv)
{
    int raw = argc > 1 ? atoi(argv[1]) : INT_MIN;
    int divisor = argc > 2 ? atoi(argv[2]) : -1;
    printf("%d\n", scale_reading(raw, divisor));
    return 0;
}
