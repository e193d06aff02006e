/** What a run opened is closed last-opened first, once, by whoever owns it last; one failing close does not keep the others open. */
import { describe, expect, it } from "vitest";
import { Resources } from "../../src/resources.js";

describe("Resources", () => {
  it("closes in reverse order when its scope ends", async () => {
    const closed: string[] = [];
    {
      await using resources = new Resources();
      resources.defer(() => closed.push("lock"));
      resources.use({ close: () => closed.push("store") });
      resources.defer(async () => {
        closed.push("debugger");
      });
    }
    expect(closed).toEqual(["debugger", "store", "lock"]);
  });

  it("hands everything to the stack move() returns, leaving itself empty", async () => {
    const closed: string[] = [];
    let moved: Resources;
    {
      await using opening = new Resources();
      opening.defer(() => closed.push("session"));
      moved = opening.move();
    }
    expect(closed).toEqual([]);
    await moved[Symbol.asyncDispose]();
    expect(closed).toEqual(["session"]);
  });

  it("closes the rest when one close fails, and then throws the first failure", async () => {
    const closed: string[] = [];
    const resources = new Resources();
    resources.defer(() => closed.push("first opened"));
    resources.defer(() => {
      throw new Error("busy");
    });
    resources.defer(() => closed.push("last opened"));
    await expect(resources[Symbol.asyncDispose]()).rejects.toThrow("busy");
    expect(closed).toEqual(["last opened", "first opened"]);
  });
});
