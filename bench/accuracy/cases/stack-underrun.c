// set: tuned
// expect: stack-buffer-overflow write_digits_backwards
// flags: -g -O2 -fno-stack-protector
/* Writes a number's digits backwards from the end of a field; a length taken from a corrupt
 * header makes it write far below the field's start, off the bottom of the stack. */
#include <stdio.h>
#include <string.h>

__attribute__((noinline)) static void write_digits_backwards(char *end, size_t count, unsigned value)
{
    for (size_t i = 0; i < count; i++) {
        end[-(long)i] = (char)('0' + value % 10); // CULPRIT
        value = value / 10 + 7;
    }
}

static int encode_field(size_t declared_length)
{
    char field[64];
    write_digits_backwards(field + sizeof field - 1, declared_length, 12345);
    return field[0];
}

int main(void)
{
    printf("%d\n", encode_field((size_t)1 << 28));
    return 0;
}
