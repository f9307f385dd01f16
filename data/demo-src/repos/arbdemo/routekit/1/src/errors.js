export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export class NotFoundError extends HttpError {
  constructor(path) {
    super(404, `no route for ${path}`);
  }
}

export class MethodNotAllowedError extends HttpError {
  constructor(allowed) {
    super(405, `method not allowed; allowed: ${allowed.join(', ')}`);
    this.allowed = allowed;
  }
}
