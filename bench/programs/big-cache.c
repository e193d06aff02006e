/* An in-memory cache service holding about 1 GiB of records when one lookup follows an entry
 * whose value was never filled in: its core is the size a real service's is. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SHARDS 256
#define RECORDS_PER_SHARD 4096
#define RECORD_BYTES 1024 /* 256 x 4096 x 1024 = 1 GiB */

struct value {
    uint32_t length;
    char bytes[];
};

struct entry {
    uint64_t key;
    struct value *value;
    char payload[RECORD_BYTES - 16];
};

static struct entry *shards[SHARDS];

static void fill_shard(int shard)
{
    shards[shard] = malloc(sizeof(struct entry) * RECORDS_PER_SHARD);
    for (int i = 0; i < RECORDS_PER_SHARD; i++) {
        struct entry *entry = &shards[shard][i];
        entry->key = (uint64_t)shard * RECORDS_PER_SHARD + i;
        /* Every record's payload is written, so each page is in the core. */
        memset(entry->payload, 'a' + (i % 26), sizeof entry->payload);
        entry->value = NULL;
    }
}

static uint32_t value_length(const struct entry *entry)
{
    return entry->value->length;
}

int main(void)
{
    for (int shard = 0; shard < SHARDS; shard++)
        fill_shard(shard);
    uint64_t key = 123457;
    const struct entry *entry = &shards[key / RECORDS_PER_SHARD][key % RECORDS_PER_SHARD];
    printf("value of %llu has %u bytes\n", (unsigned long long)key, value_length(entry));
    return 0;
}
