// set: held-out
// expect: uncaught-exception plan_buffer
// An image pipeline reserves room for every pixel of a frame whose size came from a header.
#include <cstdio>
#include <vector>

static std::vector<unsigned> plan_buffer(std::size_t width, std::size_t height)
{
    std::vector<unsigned> pixels;
    pixels.reserve(width * height); // CULPRIT
    return pixels;
}

int main()
{
    std::size_t width = 1ull << 31, height = 1ull << 31;
    auto pixels = plan_buffer(width, height);
    std::printf("%zu\n", pixels.capacity());
    return 0;
}
