export async function runMiddleware(stack, context, last) {
  let index = -1;
  async function dispatch(i) {
    if (i <= index) throw new Error('next() called more than once');
    index = i;
    const fn = i === stack.length ? last : stack[i];
    return fn(context, () => dispatch(i + 1));
  }
  return dispatch(0);
}

export function timing(clock = () => Date.now()) {
  return async (context, next) => {
    const started = clock();
    const result = await next();
    context.state.elapsedMs = clock() - started;
    return result;
  };
}
