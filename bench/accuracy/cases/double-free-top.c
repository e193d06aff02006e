// set: tuned
// expect: double-free report_destroy
/* A report body is released on the error path and again by the cleanup. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct report { char *body; size_t length; };

static int render(struct report *report, int fail)
{
    report->body = malloc(4096);
    memset(report->body, ' ', 4096);
    if (fail) {
        free(report->body);
        return -1;
    }
    return 0;
}

static void report_destroy(struct report *report)
{
    free(report->body); // CULPRIT
}

int main(void)
{
    struct report report = { NULL, 0 };
    if (render(&report, 1) < 0)
        fprintf(stderr, "render failed\n");
    report_destroy(&report);
    return 0;
}
