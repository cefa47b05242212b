import { jest } from '@jest/globals';
import { Countdown } from './countdown.js';

describe('Countdown', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('expires once after its time', () => {
    const expired = jest.fn();
    const countdown = new Countdown(1_000, expired);
    jest.advanceTimersByTime(999);
    expect(expired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
    expect(countdown.expired).toBe(true);
    jest.advanceTimersByTime(5_000);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('stands still while held, and goes on with what was left when the last hold is released', () => {
    const expired = jest.fn();
    const countdown = new Countdown(1_000, expired);
    jest.advanceTimersByTime(600);
    const first = countdown.hold();
    const second = countdown.hold();
    jest.advanceTimersByTime(60_000);
    first();
    first();
    jest.advanceTimersByTime(60_000);
    expect(expired).not.toHaveBeenCalled();
    second();
    jest.advanceTimersByTime(399);
    expect(expired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('restarts with its whole time, at once or when released', () => {
    const expired = jest.fn();
    const countdown = new Countdown(1_000, expired);
    jest.advanceTimersByTime(900);
    countdown.restart();
    jest.advanceTimersByTime(900);
    const release = countdown.hold();
    countdown.restart();
    release();
    jest.advanceTimersByTime(999);
    expect(expired).not.toHaveBeenCalled();
    jest.advanceTimersByTime(1);
    expect(expired).toHaveBeenCalledTimes(1);
  });

  it('never expires once stopped', () => {
    const expired = jest.fn();
    const countdown = new Countdown(10, expired);
    countdown.stop();
    jest.advanceTimersByTime(1_000);
    expect(expired).not.toHaveBeenCalled();
  });
});
