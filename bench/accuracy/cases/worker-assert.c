// set: held-out
// expect: assertion-failure drain_queue
/* Workers drain a shared queue; one finds the count below zero. */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static int queued = 3;

static void drain_queue(int id)
{
    for (int i = 0; i < 4; i++) {
        queued--;
        assert(queued >= 0 && "queue count went negative"); // CULPRIT
    }
    printf("worker %d done\n", id);
}

static void *worker(void *arg)
{
    drain_queue((int)(long)arg);
    return NULL;
}

int main(void)
{
    pthread_t t;
    pthread_create(&t, NULL, worker, (void *)1L);
    pthread_join(t, NULL);
    return 0;
}
